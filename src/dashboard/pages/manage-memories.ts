import type { FastifyRequest } from 'fastify';
import { validationError } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { ingestionWriteOf } from '../../core/ingestion/ingestion-forget.ts';
import { EXPORT_FORMAT_VERSION, memoryLine, versionLine } from '../../core/memories/memory-export.ts';
import type { Memory, MemoryPatch, NewMemoryInput } from '../../core/memories/memory.types.ts';
import { authorize } from '../../core/operations/runner.ts';
import { Download, field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { fields, jsonObjectField, listOf, orShowRefusal } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, page, query } from '../layout.ts';
import { may } from '../permissions.ts';

/**
 * Managing memories (docs/dashboard.md, "Managing"): create (also as the memory that supersedes another), edit with
 * metadata as JSON, forget one or a selection after a preview of what goes, and export a selection in `mnemo
 * export`'s format. Each action calls the MemoryService operation the REST API calls (memory.create, memory.update,
 * memory.delete, memory.read), so scopes, quotas and events are the API's.
 */
const base = `${DASHBOARD_PREFIX}/memories`;
/** A selection holds at most this many memories (the list shows 25 a page). */
export const MAX_SELECTION = 100;
/** Earlier versions an export carries per memory at most (the history kept is bounded by the store, not by this). */
const EXPORT_VERSIONS = 1_000;

interface MemoryFormValues {
  title: string;
  content: string;
  memoryType: string;
  tags: string;
  metadata: string;
}

const valuesOf = (m: Memory): MemoryFormValues => ({
  title: m.title, content: m.content, memoryType: m.memoryType, tags: m.tags.join(', '), metadata: JSON.stringify(m.metadata, null, 2),
});

const typedValues = (req: FastifyRequest): MemoryFormValues => ({
  title: field(req, 'title') ?? '', content: field(req, 'content') ?? '', memoryType: field(req, 'memory_type') ?? '',
  tags: field(req, 'tags') ?? '', metadata: field(req, 'metadata') ?? '',
});

/** The fields of a memory's form; metadata is a JSON object, checked when sent. */
const memoryFields = (v: MemoryFormValues): SafeHtml => html`
  <p><label>Title <input type="text" name="title" value="${v.title}" size="60"></label></p>
  <p><label>Content <textarea name="content" required>${v.content}</textarea></label></p>
  <p><label>Type <input type="text" name="memory_type" value="${v.memoryType}" placeholder="note"></label>
  <label>Tags (comma separated) <input type="text" name="tags" value="${v.tags}" size="40"></label></p>
  <p><label>Metadata (a JSON object) <textarea name="metadata" class="json" spellcheck="false">${v.metadata}</textarea></label></p>`;

/** The ids of a selection: UUIDs only, at most MAX_SELECTION, each once. */
function selectionOf(req: FastifyRequest): string[] {
  const ids = [...new Set(fields(req, 'id').map((id) => id.toLowerCase()))];
  if (ids.length === 0) throw validationError([{ field: 'id', reason: 'required', message: 'tick at least one memory' }], 'Nothing selected');
  if (ids.length > MAX_SELECTION) throw validationError([{ field: 'id', reason: 'too_many', message: `at most ${MAX_SELECTION} memories at once` }]);
  if (ids.some((id) => !isUuid(id))) throw validationError([{ field: 'id', reason: 'invalid_format', message: 'must be memory ids (UUIDs)' }]);
  return ids;
}

/** What forgetting a memory removes, as the store's delete does it (docs/memory-lifecycle.md, "Deleting"). */
async function forgetPreview(deps: PageDeps, viewer: Viewer, m: Memory): Promise<SafeHtml> {
  const h = await deps.memories.history(viewer.scope, m.id, { limit: 1, offset: 0 });
  const job = ingestionWriteOf(m.clientId);
  return html`<li data-memory="${m.id}"><a href="${base}/${m.id}">${m.title || m.id}</a> <code>${m.id}</code>
<ul class="changes">
<li>its content, tags, metadata and vectors, and <strong class="versions">${h.total} earlier version${h.total === 1 ? '' : 's'}</strong></li>
${h.chain.supersedes.length > 0 ? html`<li>the link to the ${h.chain.supersedes.length} memor${h.chain.supersedes.length === 1 ? 'y' : 'ies'} it replaced (they stay, superseded)</li>` : ''}
${m.supersededBy ? html`<li>it is superseded by <a href="${base}/${m.supersededBy}">${m.supersededBy}</a>, which stays</li>` : ''}
${job ? html`<li class="job">its text in ingestion <a href="${DASHBOARD_PREFIX}/reviews/${job.jobId}">${job.jobId}</a> (proposal ${job.proposalId} and the messages it came from are blanked)</li>` : ''}
</ul></li>`;
}

const forgetNote = html`<p>Forgetting is permanent. What stays: a tombstone (the id, when, by whom), a <code>memory.deleted</code>
event for webhooks and streams, and the ids in events already sent.</p>`;

export const manageMemoryRoutes: RouteRegistrar = (app, deps) => {
  const newPage = (viewer: Viewer, v: MemoryFormValues, supersedes: Memory | null, refusal: SafeHtml | null = null) =>
    page(supersedes ? `Replace ${supersedes.title || supersedes.id}` : 'New memory', viewer.chrome('memories'), html`${refusal}
${supersedes ? html`<p class="notice" id="replacing">The new memory supersedes <a href="${base}/${supersedes.id}">${supersedes.title || supersedes.id}</a>:
it stops holding when this one starts, and stays readable in its history.</p>` : ''}
<form method="post" action="${base}/new" class="card" id="memory-form">${csrfField(viewer.session.csrfToken)}
${supersedes ? html`<input type="hidden" name="supersedes" value="${supersedes.id}">` : ''}
${memoryFields(v)}
  <button class="primary" id="create">${supersedes ? 'Save the replacing memory' : 'Create'}</button> <a href="${base}">Cancel</a>
</form>`);

  app.get(`${base}/new`, signedIn(deps, 'memory.create', async (req, _reply, viewer) => {
    const replacing = param(req, 'supersedes');
    const old = replacing === undefined ? null : await deps.memories.find(viewer.scope, replacing);
    return newPage(viewer, old ? valuesOf(old) : { title: '', content: '', memoryType: '', tags: '', metadata: '{}' }, old);
  }));

  app.post(`${base}/new`, signedIn(deps, 'memory.create', async (req, reply, viewer) => {
    const typed = typedValues(req);
    const replacing = field(req, 'supersedes')?.trim() || undefined;
    const old = replacing === undefined ? null : await deps.memories.find(viewer.scope, replacing);
    return orShowRefusal(reply, async () => {
      const input: NewMemoryInput = {
        title: typed.title.trim(), content: typed.content, tags: listOf(typed.tags), metadata: jsonObjectField(typed.metadata, 'metadata'),
        ...(typed.memoryType.trim() ? { memoryType: typed.memoryType.trim() } : {}), ...(old ? { supersedes: [old.id] } : {}),
      };
      const created = await deps.memories.create(viewer.scope, viewer.principal, input);
      return new SeeOther(`${base}/${created.id}`);
    }, (refusal) => newPage(viewer, typed, old, refusal));
  }));

  const editPage = (viewer: Viewer, m: Memory, v: MemoryFormValues, refusal: SafeHtml | null = null) => {
    const csrf = csrfField(viewer.session.csrfToken);
    return page(`Edit ${m.title || m.id}`, viewer.chrome('memories'), html`${refusal}
<p>Version ${m.version} · <a id="history-link" href="${base}/${m.id}/history">History</a> (each save keeps the state it replaces)</p>
<form method="post" action="${base}/${m.id}" class="card" id="edit-form">${csrf}
${memoryFields(v)}
  <button class="primary" id="save">Save</button> <a href="${base}/${m.id}">Cancel</a>
</form>
<div class="card">
  <p>Has the fact changed rather than been mistyped? <a id="replace" href="${base}/new${query({ supersedes: m.id })}">Write the memory that replaces it</a>:
  this one is then kept as superseded.</p>
  ${may('memory.delete', viewer.principal) ? html`<p><a id="forget" href="${base}/${m.id}/forget">Forget this memory…</a> (shows what goes first)</p>` : ''}
</div>`);
  };

  app.get<{ Params: { id: string } }>(`${base}/:id/edit`, signedIn(deps, 'memory.update', async (req, _reply, viewer) => {
    const m = await deps.memories.find(viewer.scope, (req.params as { id: string }).id);
    return editPage(viewer, m, valuesOf(m));
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'memory.update', async (req, reply, viewer) => {
    const id = (req.params as { id: string }).id;
    // Only the fields the form sent change (a form without metadata leaves it as it is).
    const typed = typedValues(req);
    const sent = (name: string) => field(req, name) !== undefined;
    return orShowRefusal(reply, async () => {
      const patch: MemoryPatch = {};
      if (sent('title')) patch.title = typed.title.trim();
      if (sent('content')) patch.content = typed.content;
      if (typed.memoryType.trim()) patch.memoryType = typed.memoryType.trim();
      if (sent('tags')) patch.tags = listOf(typed.tags);
      if (sent('metadata')) patch.metadata = jsonObjectField(typed.metadata, 'metadata');
      const m = await deps.memories.update(viewer.scope, viewer.principal, id, patch);
      return new SeeOther(`${base}/${m.id}`);
    }, async (refusal) => editPage(viewer, await deps.memories.find(viewer.scope, id), typed, refusal));
  }));

  app.get<{ Params: { id: string } }>(`${base}/:id/forget`, signedIn(deps, 'memory.delete', async (req, _reply, viewer) => {
    const m = await deps.memories.find(viewer.scope, (req.params as { id: string }).id);
    return page(`Forget ${m.title || m.id}?`, viewer.chrome('memories'), html`
<div class="card" id="forget-preview"><p>Forgetting removes:</p><ul>${await forgetPreview(deps, viewer, m)}</ul>${forgetNote}</div>
<form method="post" action="${base}/${m.id}/delete" class="card">${csrfField(viewer.session.csrfToken)}
  <button id="confirm-forget" class="primary">Forget it</button> <a href="${base}/${m.id}">Keep it</a>
</form>`);
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/delete`, signedIn(deps, 'memory.delete', async (req, _reply, viewer) => {
    const { id } = await deps.memories.delete(viewer.scope, viewer.principal, (req.params as { id: string }).id);
    return new SeeOther(`${base}${query({ deleted: id })}`);
  }));

  /** The list's selection: export it as a file, or preview forgetting it. */
  app.post(`${base}/selection`, signedIn(deps, ['memory.read', 'memory.delete'], async (req, _reply, viewer) => {
    const action = field(req, 'action');
    if (action !== 'export' && action !== 'forget') throw validationError([{ field: 'action', reason: 'invalid_value', message: 'must be export or forget' }]);
    authorize(action === 'export' ? 'memory.read' : 'memory.delete', viewer.principal);
    const ids = selectionOf(req);
    const found = (await Promise.all(ids.map((id) => deps.memories.findById(viewer.scope, id)))).filter((m): m is Memory => m !== null);
    if (action === 'export') return exportOf(deps, viewer, found);
    const csrf = csrfField(viewer.session.csrfToken);
    return page(`Forget ${found.length} memor${found.length === 1 ? 'y' : 'ies'}?`, viewer.chrome('memories'), html`
<div class="card" id="forget-preview"><p>Forgetting removes:</p><ol>${await Promise.all(found.map((m) => forgetPreview(deps, viewer, m)))}</ol>
${found.length < ids.length ? html`<p class="muted">${ids.length - found.length} selected memor${ids.length - found.length === 1 ? 'y is' : 'ies are'} gone already.</p>` : ''}${forgetNote}</div>
<form method="post" action="${base}/selection/forget" class="card">${csrf}
  ${found.map((m) => html`<input type="hidden" name="id" value="${m.id}">`)}
  <button id="confirm-forget" class="primary">Forget ${found.length}</button> <a href="${base}">Keep them</a>
</form>`);
  }));

  app.post(`${base}/selection/forget`, signedIn(deps, 'memory.delete', async (req, _reply, viewer) => {
    let forgotten = 0;
    // One delete each, as REST's DELETE: each is one memory write of the quota and sends its memory.deleted event.
    for (const id of selectionOf(req)) {
      if (await deps.memories.findById(viewer.scope, id) === null) continue;
      await deps.memories.delete(viewer.scope, viewer.principal, id);
      forgotten++;
    }
    return new SeeOther(`${base}${query({ forgotten })}`);
  }));
};

/** The selection in `mnemo export`'s JSONL format (core/memories/memory-export.ts): the header, memories, then versions. */
async function exportOf(deps: PageDeps, viewer: Viewer, memories: Memory[]): Promise<Download> {
  const at = deps.clock.now();
  const vectors = await deps.memories.vectorsOf(viewer.scope, memories.map((m) => m.id));
  const lines = [JSON.stringify({
    mnemo_export: EXPORT_FORMAT_VERSION, exported_at: at.toISOString(),
    filter: { tenant: viewer.scope.tenantId, mode: viewer.scope.mode, workspace: viewer.scope.workspace },
  })];
  for (const m of memories) {
    const v = vectors.get(m.id);
    lines.push(memoryLine(m, v ? [{ modelId: deps.embeddingModel, vector: v }] : []));
  }
  for (const m of memories) {
    const { versions } = await deps.memories.history(viewer.scope, m.id, { limit: EXPORT_VERSIONS, offset: 0 });
    for (const version of versions) lines.push(versionLine(m.scope, version));
  }
  return new Download(`mnemo-export-${at.toISOString().slice(0, 10)}.jsonl`, 'application/x-ndjson; charset=utf-8', `${lines.join('\n')}\n`);
}

/** On the memories list: a checkbox per row, belonging to the selection form below the table. */
export const selectBox = (m: Memory): SafeHtml =>
  html`<input type="checkbox" name="id" value="${m.id}" form="selection" aria-label="Select ${m.title || m.id}">`;

/** Below the memories list: what to do with the ticked memories, the New memory link, and what the last action did. */
export function selectionControls(req: FastifyRequest, viewer: Viewer): SafeHtml {
  const forgotten = param(req, 'forgotten');
  const canForget = may('memory.delete', viewer.principal);
  return html`${forgotten !== undefined && /^\d{1,4}$/.test(forgotten) ? html`<p class="notice" id="forgotten">${forgotten} memor${forgotten === '1' ? 'y' : 'ies'} forgotten.</p>` : ''}
<form method="post" action="${base}/selection" id="selection" class="filters">${csrfField(viewer.session.csrfToken)}
  <span class="muted">Ticked memories:</span>
  <button name="action" value="export" id="export-selected">Export selected</button>
  ${canForget ? html`<button name="action" value="forget" id="forget-selected">Forget selected…</button>` : ''}
  ${may('memory.create', viewer.principal) ? html`<a href="${base}/new" id="new-memory">New memory</a>` : ''}
</form>`;
}
