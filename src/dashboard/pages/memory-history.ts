import { validationError } from '../../core/errors.ts';
import type { ChainLink } from '../../core/memories/memory.service.ts';
import type { Memory, MemoryVersion } from '../../core/memories/memory.types.ts';
import { validityAt, type ValidityState } from '../../core/memories/validity.ts';
import { field, param, SeeOther, signedIn } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';

/**
 * "Memory that stays true" on the dashboard (docs/memory-lifecycle.md): a memory's validity (shown on its page), its
 * history page (earlier versions with what each update changed, the supersession chain both ways) and the form that
 * marks it superseded.
 */
const base = `${DASHBOARD_PREFIX}/memories`;
/** Earlier versions per history page. */
export const VERSIONS_PAGE = 10;

const LABEL: Record<ValidityState, string> = { valid: 'valid', expired: 'expired', superseded: 'superseded', not_yet_valid: 'not yet valid' };

/** A badge for a memory that does not hold at `now` (superseded, expired, not yet valid); nothing for one that does. */
export function validityBadge(m: Memory, now: Date): SafeHtml {
  const state = validityAt(m, now);
  return state === 'valid' ? html`` : html`<span class="status validity validity-${state}" data-validity="${state}">${LABEL[state]}</span>`;
}

/**
 * The validity rows of a memory's page (inside its card): status and bounds, its successor (linked), the version and
 * the link to its history.
 */
export async function validityRows(deps: PageDeps, m: Memory): Promise<SafeHtml> {
  const state = validityAt(m, deps.clock.now());
  const successor = m.supersededBy === null ? null : await deps.memories.findById(m.scope, m.supersededBy);
  const kept = m.version - 1;
  return html`<dt>Validity</dt><dd id="validity"><span class="status validity validity-${state}" data-validity="${state}">${LABEL[state]}</span>
from ${dateTime(m.validFrom)} until ${m.validUntil === null ? html`<span class="muted">open</span>` : dateTime(m.validUntil)}</dd>
${m.supersededBy === null ? '' : html`<dt>Superseded by</dt><dd><a id="superseded-by" href="${base}/${m.supersededBy}">${successor?.title || m.supersededBy}</a>${successor === null ? html` <span class="muted">(deleted since)</span>` : ''}</dd>`}
<dt>Version</dt><dd>${m.version} · <a id="history-link" href="${base}/${m.id}/history">History</a>${kept > 0 ? html` <span class="muted">(${kept} earlier version${kept === 1 ? '' : 's'})</span>` : ''}</dd>`;
}

/** The form that marks a memory superseded by another: for a key that may write, while nothing has replaced it. */
export const supersedeForm = (m: Memory, canWrite: boolean, csrfToken: string): SafeHtml => (canWrite && m.supersededBy === null
  ? html`<form method="post" action="${base}/${m.id}/supersede" class="card" id="supersede-form">${csrfField(csrfToken)}
  <p>When another memory states this fact as it now is, mark this one superseded by it: it is kept (its history too), but
  searches and lists stop returning it. Only for the same fact changed, never for a merely similar memory.</p>
  <label>Superseded by (memory id) <input type="text" name="by" required placeholder="UUID or 8+ character prefix"></label>
  <button id="supersede">Mark superseded</button>
</form>`
  : html``);

/** The fields a version and the state after it can differ in, as a person reads them. */
type State = Pick<Memory, 'title' | 'content' | 'memoryType' | 'tags' | 'metadata' | 'topicId' | 'validFrom' | 'validUntil'>;
type Change = { field: string; from?: SafeHtml | string; to?: SafeHtml | string };

const time = (d: Date | null): SafeHtml => (d === null ? html`<span class="muted">open</span>` : dateTime(d));
const sameTime = (a: Date | null, b: Date | null): boolean => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * What the update that replaced `older` changed, comparing it with the state it left (`newer`). A supersession
 * changes valid_until without a new version: beside a superseded current memory, valid_until is not counted.
 */
export function changesBetween(older: State, newer: State, ignoreValidUntil: boolean): Change[] {
  const out: Change[] = [];
  if (older.title !== newer.title) out.push({ field: 'title', from: older.title, to: newer.title });
  if (older.content !== newer.content) out.push({ field: 'content' });
  if (older.memoryType !== newer.memoryType) out.push({ field: 'type', from: older.memoryType, to: newer.memoryType });
  if (older.tags.join('\u0000') !== newer.tags.join('\u0000')) out.push({ field: 'tags', from: older.tags.join(', ') || '—', to: newer.tags.join(', ') || '—' });
  if (JSON.stringify(older.metadata) !== JSON.stringify(newer.metadata)) out.push({ field: 'metadata' });
  if (older.topicId !== newer.topicId) out.push({ field: 'topic', from: older.topicId ?? '—', to: newer.topicId ?? '—' });
  if (!sameTime(older.validFrom, newer.validFrom)) out.push({ field: 'valid from', from: time(older.validFrom), to: time(newer.validFrom) });
  if (!ignoreValidUntil && !sameTime(older.validUntil, newer.validUntil)) out.push({ field: 'valid until', from: time(older.validUntil), to: time(newer.validUntil) });
  return out;
}

const changeList = (changes: Change[]): SafeHtml => (changes.length === 0
  ? html`<span class="muted">nothing</span>`
  : html`<ul class="changes">${changes.map((c) => html`<li><strong>${c.field}</strong>${c.from === undefined ? '' : html`: ${c.from} → ${c.to}`}</li>`)}</ul>`);

const chainList = (id: string, links: ChainLink[], none: string): SafeHtml => (links.length === 0
  ? html`<p class="muted" id="${id}">${none}</p>`
  : html`<ol id="${id}">${links.map((l) => html`<li><a href="${base}/${l.id}">${l.title || l.id}</a> <span class="muted">valid ${dateTime(l.validFrom)} – ${time(l.validUntil)}</span></li>`)}</ol>`);

const versionRow = (v: MemoryVersion, changes: Change[]): SafeHtml => html`<tr data-version="${v.version}"><td>${v.version}</td>
<td>${dateTime(v.writtenAt)} by ${v.writtenBy}</td><td>${dateTime(v.replacedAt)} by ${v.replacedBy}</td><td>${changeList(changes)}</td>
<td><details><summary>${v.title}</summary><pre>${v.content}</pre>${v.tags.length > 0 ? html`<p>Tags: ${v.tags.join(', ')}</p>` : ''}</details></td></tr>`;

function offsetOf(text: string | undefined): number {
  if (text === undefined) return 0;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw validationError([{ field: 'offset', reason: 'out_of_range', message: 'must be a whole number from 0 to 1000000' }]);
  return n;
}

export const memoryLifecycleRoutes: RouteRegistrar = (app, deps) => {
  app.get<{ Params: { id: string } }>(`${base}/:id/history`, signedIn(deps, 'memory.history', async (req, _reply, viewer) => {
    const offset = offsetOf(param(req, 'offset'));
    // From the second page on, the version just above the page is read too: what its first version changed is judged against it.
    const h = await deps.memories.history(viewer.scope, (req.params as { id: string }).id,
      { limit: VERSIONS_PAGE + (offset > 0 ? 1 : 0), offset: offset > 0 ? offset - 1 : 0 });
    const chrome = viewer.chrome('memories');
    if (h.memory === null) {
      const t = h.tombstone!;
      return page('Deleted memory', chrome, html`<p class="notice" id="tombstone">Memory <code>${t.memoryId}</code> was deleted ${dateTime(t.deletedAt)}
by ${t.deletedBy} (${t.reason}). Its content and its versions are gone; only this record remains.</p>
<p><a href="${base}">All memories</a></p>`);
    }
    const m = h.memory;
    const versions = offset > 0 ? h.versions.slice(1) : h.versions;
    let newer: State | null = offset > 0 ? h.versions[0] ?? null : m;
    const rows: SafeHtml[] = [];
    for (const v of versions) {
      rows.push(versionRow(v, newer === null ? [] : changesBetween(v, newer, newer === m && m.supersededBy !== null)));
      newer = v;
    }
    const nav = (to: number) => `${base}/${m.id}/history${query({ offset: to > 0 ? to : undefined })}`;
    return page(`History: ${m.title || m.id}`, chrome, html`
<p><a href="${base}/${m.id}" id="back">Back to the memory</a> · version ${m.version} ${validityBadge(m, deps.clock.now())}</p>
<h2>Supersession</h2>
<div class="card" id="chain">
<p><strong>Replaces</strong> (nearest first):</p>${chainList('chain-supersedes', h.chain.supersedes, 'Nothing: it replaced no other memory.')}
<p><strong>Replaced by</strong> (nearest first; the last one holds now):</p>${chainList('chain-superseded-by', h.chain.supersededBy, 'Nothing: no memory replaced it.')}
</div>
<h2>Versions</h2>
<p class="muted">${h.total} earlier version${h.total === 1 ? '' : 's'}, newest first: each update keeps the state it replaced.</p>
<div class="table-scroll"><table id="versions"><thead><tr><th>Version</th><th>Written</th><th>Replaced</th><th>Changed by the update that replaced it</th><th>Then</th></tr></thead><tbody>
${offset === 0 ? html`<tr data-version="${m.version}" class="current"><td>${m.version} (current)</td><td>${dateTime(m.updatedAt)} by ${m.updatedBy}</td>
<td><span class="muted">—</span></td><td><span class="muted">—</span></td><td><details><summary>${m.title}</summary><pre>${m.content}</pre></details></td></tr>` : ''}
${rows}</tbody></table></div>
<p>${offset > 0 ? html`<a id="newer" href="${nav(Math.max(0, offset - VERSIONS_PAGE))}">Newer</a> ` : ''}
${offset + VERSIONS_PAGE < h.total ? html`<a id="older" href="${nav(offset + VERSIONS_PAGE)}">Older</a>` : ''}</p>`);
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/supersede`, signedIn(deps, 'memory.supersede', async (req, _reply, viewer) => {
    const by = field(req, 'by')?.trim();
    if (!by) throw validationError([{ field: 'by', reason: 'required', message: 'name the memory that replaces this one' }]);
    const old = await deps.memories.supersede(viewer.scope, viewer.principal, (req.params as { id: string }).id, by);
    return new SeeOther(`${base}/${old.id}`);
  }));
};
