import type { FastifyRequest } from 'fastify';
import { isDomainError, validationError, type DomainError } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { ReviewInput } from '../../core/ingestion/ingestion.service.ts';
import type { IngestionJob, IngestionState, Proposal } from '../../core/ingestion/ingestion.types.ts';
import type { Memory } from '../../core/memories/memory.types.ts';
import { auditStatusOf } from '../../core/operations/runner.ts';
import { audited } from '../audit-trail.ts';
import { field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { validityBadge } from './memory-history.ts';

/**
 * Reviews (docs/ingestion.md): the ingestions of this workspace whose proposals wait for a person, and one
 * ingestion's proposals beside what they came from (the source messages) and what they would replace. Decisions
 * go through `ingestion.review` as the REST surface's do, as operation `memory.ingest_review`, which writes the audit
 * row; the service refuses the key that asked, whatever this page shows.
 */
const base = `${DASHBOARD_PREFIX}/reviews`;
const PAGE_SIZE = 25;

const STATES: readonly IngestionState[] = ['pending_review', 'queued', 'running', 'completed', 'failed'];
type Decision = 'approve' | 'reject';
const isDecision = (text: string | undefined): text is Decision => text === 'approve' || text === 'reject';
const PROPOSAL_ID = /^p[0-9]{1,6}$/;

const badge = (status: string): SafeHtml => html`<span class="status status-${status}">${status.replace('_', ' ')}</span>`;
const pendingOf = (job: IngestionJob): Proposal[] => job.proposals.filter((p) => p.status === 'pending');

/**
 * The refusals the page shows above the ingestion (others get the error page); NOT_FOUND too, as a memory to replace
 * may be gone, while an ingestion that is not found still ends on the error page (reading it again throws).
 */
const SHOWN_ON_PAGE = new Set(['PERMISSION_DENIED', 'CONFLICT', 'VALIDATION_FAILED', 'NOT_FOUND']);

const describeRefusal = (err: DomainError): string => {
  const problems = (err.details.fields ?? []).map((p) => p.message).join('; ');
  return problems ? `${err.message}: ${problems}` : err.message;
};

/** Why this viewer gets no working buttons (null: they do). The service decides again on every POST. */
function whyReadOnly(job: IngestionJob, viewer: Viewer): string | null {
  if (job.requestedBy.keyId === viewer.principal.keyId) {
    return `The key that asked cannot review its own ingestion: you are signed in with ${job.requestedBy.keyId}, which asked for it. `
      + 'Another key (of a person) approves or rejects these proposals.';
  }
  if (!viewer.principal.scopes.has('memories:write')) return 'This key lacks the memories:write scope: it can read these proposals but not decide them.';
  return null;
}

/** One existing memory as the proposal sees it: read in the job's scope, or gone since. */
function memoryPane(id: string, m: Memory | null, now: Date): SafeHtml {
  if (m === null) {
    return html`<div class="pane gone" data-memory="${id}"><p><code>${id}</code></p><p class="refusal">This memory no longer exists (deleted since the proposal was made).</p></div>`;
  }
  return html`<div class="pane" data-memory="${m.id}"><p><a href="${DASHBOARD_PREFIX}/memories/${m.id}">${m.title || m.id}</a> ${validityBadge(m, now)}</p>
<pre>${m.content}</pre><p class="muted">valid from ${dateTime(m.validFrom)}${m.validUntil ? html` until ${dateTime(m.validUntil)}` : ''}</p></div>`;
}

const proposedPane = (p: Proposal, label: string): SafeHtml =>
  html`<div class="column"><p><strong>${label}</strong></p><div class="pane proposed"><pre class="proposed-content">${p.content}</pre></div></div>`;

function sourceList(job: IngestionJob, p: Proposal): SafeHtml {
  if (p.sources.length === 0) return html`<p class="muted">No source message named.</p>`;
  return html`<ul class="sources">${p.sources.map((i) => {
    const m = job.messages[i];
    if (!m) return html`<li class="muted">Message ${i}: not in this ingestion.</li>`;
    return html`<li data-position="${i}"><span class="muted">[${i}] <span class="role">${m.role}</span>${m.timestamp ? html` · ${dateTime(m.timestamp)}` : ''}</span>
<blockquote>${m.content}</blockquote></li>`;
  })}</ul>`;
}

async function proposalCard(deps: PageDeps, viewer: Viewer, job: IngestionJob, p: Proposal, blocked: boolean): Promise<SafeHtml> {
  const now = deps.clock.now();
  const read = async (id: string) => memoryPane(id, isUuid(id) ? await deps.memories.findById(job.scope, id.toLowerCase()) : null, now);
  let body: SafeHtml;
  if (p.action === 'supersede') {
    const replaced = await Promise.all(p.supersedes.map(read));
    body = html`<div class="side-by-side"><div class="column"><p><strong>Replaces</strong></p>${replaced}</div>${proposedPane(p, 'Proposed memory')}</div>`;
  } else if (p.action === 'skip') {
    const duplicate = p.duplicateOf === null ? html`<p class="muted">No memory named.</p>` : await read(p.duplicateOf);
    body = html`<div class="side-by-side"><div class="column"><p><strong>Already stored</strong></p>${duplicate}</div>${proposedPane(p, 'Proposed (a duplicate: nothing is written)')}</div>`;
  } else {
    body = proposedPane(p, 'Proposed memory');
  }
  const decidable = p.status === 'pending' && job.state === 'pending_review';
  const disabled = blocked ? html` disabled` : '';
  return html`<section class="card proposal" id="proposal-${p.id}" data-status="${p.status}" data-action="${p.action}">
<h2>${p.id} · ${p.action} ${badge(p.status)}</h2>
${p.reason ? html`<p class="muted">Reason given: ${p.reason}</p>` : ''}
${body}
<p><strong>From</strong></p>${sourceList(job, p)}
${p.memoryId ? html`<p>Written as <a class="written" href="${DASHBOARD_PREFIX}/memories/${p.memoryId}">${p.memoryId}</a></p>` : ''}
${p.decidedBy ? html`<p class="muted">Decided by ${p.decidedBy}, ${dateTime(p.decidedAt)}</p>` : ''}
${decidable ? html`<form method="post" action="${base}/${job.id}" class="decide">${csrfField(viewer.session.csrfToken)}
  <input type="hidden" name="proposal" value="${p.id}">
  <button name="decision" value="approve" class="approve"${disabled}>Approve</button>
  <button name="decision" value="reject" class="reject"${disabled}>Reject</button>
</form>` : ''}
</section>`;
}

/** What the last POST did, from the redirect's query (known values only). */
function decidedNotice(req: FastifyRequest): SafeHtml {
  const decided = param(req, 'decided');
  if (!isDecision(decided)) return html``;
  const proposal = param(req, 'proposal');
  const verb = decided === 'approve' ? 'approved' : 'rejected';
  const what = proposal !== undefined && PROPOSAL_ID.test(proposal) ? `proposal ${proposal}` : 'every pending proposal';
  return html`<p class="notice" id="decided">You ${verb} ${what}.${decided === 'approve' ? ' Approved proposals are written together, in one transaction.' : ''}</p>`;
}

/** An ingestion's page: its facts, the read-only reason or the all-at-once form, then each proposal. */
async function detailPage(deps: PageDeps, viewer: Viewer, job: IngestionJob, top: SafeHtml): Promise<SafeHtml> {
  const why = whyReadOnly(job, viewer);
  const pending = pendingOf(job);
  const open = job.state === 'pending_review' && pending.length > 0;
  const disabled = why !== null ? html` disabled` : '';
  const cards = await Promise.all(job.proposals.map((p) => proposalCard(deps, viewer, job, p, why !== null)));
  return page(`Review ${job.id}`, viewer.chrome('reviews'), html`${top}
<dl class="card" id="ingestion">
<dt>State</dt><dd>${badge(job.state)}</dd>
<dt>Mode</dt><dd>${job.mode}${job.usage.model ? html` (model ${job.usage.model}${job.promptVersion ? `, prompts ${job.promptVersion}` : ''})` : ''} · policy ${job.policy}</dd>
<dt>Asked by</dt><dd id="requested-by">${job.requestedBy.userId} · key <code>${job.requestedBy.keyId}</code></dd>
<dt>Workspace</dt><dd>${job.scope.workspace}</dd>
<dt>Messages</dt><dd>${job.messages.length}</dd>
${job.tags.length > 0 ? html`<dt>Tags</dt><dd>${job.tags.join(', ')}</dd>` : ''}
<dt>Created</dt><dd>${dateTime(job.createdAt)}</dd>
${job.finishedAt ? html`<dt>Finished</dt><dd>${dateTime(job.finishedAt)}</dd>` : ''}
${job.error ? html`<dt>Error</dt><dd class="expired">${job.error.code}: ${job.error.message}</dd>` : ''}
</dl>
${open && why !== null ? html`<p class="notice" id="read-only">${why}</p>` : ''}
${open ? html`<form method="post" action="${base}/${job.id}" class="card" id="decide-all">${csrfField(viewer.session.csrfToken)}
  <p>${pending.length} proposal${pending.length === 1 ? '' : 's'} pending. Approved proposals are written together, in one transaction.</p>
  <button name="all" value="approve" id="approve-all"${disabled}>Approve all pending</button>
  <button name="all" value="reject" id="reject-all"${disabled}>Reject all pending</button>
</form>` : html`<p class="muted" id="nothing-to-decide">${job.state === 'pending_review' || job.state === 'completed'
    ? 'Nothing is left to decide.' : `This ingestion is ${job.state.replace('_', ' ')}: nothing to decide now.`}</p>`}
<h2>Proposals (${job.proposals.length})</h2>
${job.proposals.length === 0 ? html`<p class="muted">None${job.state === 'queued' || job.state === 'running' ? ' yet' : ''}.</p>` : cards}
<p><a href="${base}">All reviews</a></p>`);
}

/** The decisions a form asked for: one proposal's, or one for every pending proposal. */
function reviewInput(req: FastifyRequest): ReviewInput {
  const proposal = field(req, 'proposal')?.trim();
  const decision = field(req, 'decision');
  const all = field(req, 'all');
  if (proposal) {
    // A proposal id is short: anything else is refused here rather than copied into the audit row.
    if (!PROPOSAL_ID.test(proposal)) throw validationError([{ field: 'proposal', reason: 'invalid_value', message: 'must be a proposal id such as p1' }]);
    if (!isDecision(decision)) throw validationError([{ field: 'decision', reason: 'invalid_value', message: 'must be approve or reject' }]);
    return { decisions: [{ proposal, decision }] };
  }
  if (!isDecision(all)) throw validationError([{ field: 'all', reason: 'invalid_value', message: 'name a proposal, or send all=approve or all=reject' }]);
  return { decisions: [], all };
}

export const reviewRoutes: RouteRegistrar = (app, deps) => {
  app.get(base, signedIn(deps, 'memory.ingest_read', async (req, _reply, viewer) => {
    const state = param(req, 'state') ?? 'pending_review';
    if (state !== 'all' && !(STATES as readonly string[]).includes(state)) {
      throw validationError([{ field: 'state', reason: 'invalid_value', message: `must be all or one of: ${STATES.join(', ')}` }]);
    }
    const offset = Math.min(1_000_000, Math.max(0, Math.floor(Number(param(req, 'offset') ?? 0)) || 0));
    const listed = await deps.ingestion.list(viewer.scope, { state: state === 'all' ? undefined : state as IngestionState, limit: PAGE_SIZE, offset });
    const mine = viewer.principal.keyId;
    return page('Reviews', viewer.chrome('reviews'), html`
<form class="filters" method="get" action="${base}"><label>State <select name="state">
${['pending_review', 'all', ...STATES.slice(1)].map((s) => html`<option value="${s}"${s === state ? html` selected` : ''}>${s.replace('_', ' ')}</option>`)}
</select></label><button>Show</button></form>
<p class="muted">${listed.total} ingestion${listed.total === 1 ? '' : 's'}${state === 'all' ? '' : ` ${state.replace('_', ' ')}`} in workspace ${viewer.scope.workspace} (${viewer.principal.mode}).
Conversations sent with policy “review” wait here until a person decides their proposals; the key that asked cannot.</p>
<div class="table-scroll"><table id="reviews"><thead><tr><th>Ingestion</th><th>State</th><th>Mode</th><th>Asked by</th><th>Proposals</th><th>Created</th></tr></thead><tbody>
${listed.items.map((j) => html`<tr data-state="${j.state}"><td><a href="${base}/${j.id}">${j.id}</a></td><td>${badge(j.state)}</td><td>${j.mode} · ${j.policy}</td>
<td>${j.requestedBy.userId} <span class="muted">${j.requestedBy.keyId === mine ? '(this key)' : j.requestedBy.keyId}</span></td>
<td>${pendingOf(j).length} pending of ${j.proposals.length}</td><td>${dateTime(j.createdAt)}</td></tr>`)}
</tbody></table></div>
${listed.items.length === 0 ? html`<p class="muted">Nothing here.</p>` : ''}
<p>${offset > 0 ? html`<a href="${base}${query({ state, offset: Math.max(0, offset - PAGE_SIZE) })}">Newer</a> ` : ''}
${offset + PAGE_SIZE < listed.total ? html`<a href="${base}${query({ state, offset: offset + PAGE_SIZE })}">Older</a>` : ''}</p>`);
  }));

  app.get<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'memory.ingest_read', async (req, _reply, viewer) => {
    const job = await deps.ingestion.find(viewer.scope, (req.params as { id: string }).id);
    return detailPage(deps, viewer, job, decidedNotice(req));
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'memory.ingest_review', async (req, reply, viewer) => {
    const { id } = req.params as { id: string };
    const input = reviewInput(req);
    const resource = /^ing_[A-Za-z0-9]{1,60}$/.test(id) ? `ingestion:${id}` : 'ingestion';
    // The row's metadata is the REST review's (g1-memories/ingest.routes.ts) but for `via`: a row reads the same from either.
    const metadata = { workspace: viewer.scope.workspace, decisions: input.decisions.length, all: input.all ?? null };
    try {
      await audited(deps.operations, req, viewer, { operation: 'memory.ingest_review', resource, metadata },
        () => deps.ingestion.review(viewer.scope, viewer.principal, id, input), (job) => ({ state: job.state }));
    } catch (err) {
      if (!isDomainError(err) || !SHOWN_ON_PAGE.has(err.code)) throw err;
      // The refusal is shown above the ingestion as it now stands, so the person sees why and what is left.
      const job = await deps.ingestion.find(viewer.scope, id);
      reply.status(auditStatusOf(err));
      return detailPage(deps, viewer, job, html`<p class="refusal" id="review-refused" data-status="${auditStatusOf(err)}">${describeRefusal(err)}</p>`);
    }
    const decided = input.all ?? input.decisions[0]!.decision;
    return new SeeOther(`${base}/${id}${query({ decided, proposal: input.all ? undefined : input.decisions[0]!.proposal })}`);
  }));
};
