import type { FastifyRequest } from 'fastify';
import { validationError } from '../../core/errors.ts';
import type { Memory, MemoryFilter, MemoryPatch } from '../../core/memories/memory.types.ts';
import { highlight } from '../../core/search/highlights.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import { authorize } from '../../core/operations/runner.ts';
import { field, param, SeeOther, signedIn } from '../context.ts';
import { html, trusted, type SafeHtml } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { RELEVANT_SCORE } from '../../core/search/score-calibration.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { supersedeForm, validityBadge, validityRows } from './memory-history.ts';

const PAGE_SIZE = 25;
/** Semantic search's floor on the calibrated similarity unless the page asks for another: every surface's default (docs/api.md, "Scores"). */
const DEFAULT_THRESHOLD = RELEVANT_SCORE;

const tagList = (text: string | undefined): string[] =>
  (text ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0);

function filterOf(req: FastifyRequest): { filter: MemoryFilter; type?: string | undefined; tag?: string | undefined } {
  const type = param(req, 'type');
  const tag = param(req, 'tag');
  return { filter: { ...(type ? { types: [type] } : {}), ...(tag ? { tagsAny: tagList(tag) } : {}) }, type, tag };
}

function number(text: string | undefined, fallback: number, min: number, max: number, name: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) throw validationError([{ field: name, reason: 'out_of_range', message: `must be a number from ${min} to ${max}` }]);
  return n;
}

const preview = (m: Memory): string => (m.content.length > 160 ? `${m.content.slice(0, 160)}…` : m.content);
const tags = (m: Memory): SafeHtml => html`${m.tags.map((t) => html`<span class="status">${t}</span> `)}`;

export const memoryRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/memories`;

  app.get(base, signedIn(deps, ['memory.list', 'memory.search', 'memory.search_hybrid'], async (req, _reply, viewer) => {
    const { filter, type, tag } = filterOf(req);
    const q = param(req, 'q');
    const mode = param(req, 'search') === 'hybrid' ? 'hybrid' : 'semantic';
    authorize(q === undefined ? 'memory.list' : mode === 'hybrid' ? 'memory.search_hybrid' : 'memory.search', viewer.principal);
    const threshold = number(param(req, 'threshold'), DEFAULT_THRESHOLD, 0, 1, 'threshold');
    const offset = number(param(req, 'offset'), 0, 0, 1_000_000, 'offset');
    // Valid memories only, unless asked for all: superseded, expired and not yet valid ones then come marked.
    const expired = param(req, 'expired') === '1' ? '1' : undefined;
    const validity = expired ? { includeExpired: true } : undefined;
    const now = deps.clock.now();
    let body: SafeHtml;
    if (q !== undefined) {
      const ctx = { scope: viewer.scope, userId: viewer.principal.userId, surface: 'dashboard' };
      const outcome = mode === 'hybrid'
        ? await deps.search.hybrid(ctx, { query: q, limit: PAGE_SIZE, filter, semanticWeight: 0.7, keywordWeight: 0.3, rerank: false, validity })
        : await deps.search.semantic(ctx, { query: q, limit: PAGE_SIZE, filter, threshold, validity });
      body = html`<p class="muted">${outcome.total} match(es) for “${q}” (${mode}${mode === 'semantic' ? `, similarity ≥ ${threshold}` : ''}).</p>
<table id="results"><thead><tr><th>Memory</th><th>Score</th><th>Highlights</th><th>Tags</th></tr></thead><tbody>
${outcome.hits.map((h: ScoredHit) => {
        // highlight() escapes the text itself and adds only <mark>: safe to insert as markup.
        const snippets = highlight(`${h.memory.title}\n${h.memory.content}`, q);
        return html`<tr><td><a href="${base}/${h.memory.id}">${h.memory.title || h.memory.id}</a> ${validityBadge(h.memory, now)}</td><td>${h.score.toFixed(3)}</td>
<td class="highlights">${snippets.length > 0 ? snippets.map((s) => html`<div>${trusted(s)}</div>`) : html`<span class="muted">${preview(h.memory)}</span>`}</td>
<td>${tags(h.memory)}</td></tr>`;
      })}</tbody></table>`;
    } else {
      const listed = await deps.memories.list(viewer.scope, { filter, limit: PAGE_SIZE, offset, sortBy: 'updated_at', sortOrder: 'desc' }, validity);
      body = html`<p class="muted">${listed.total} memor${listed.total === 1 ? 'y' : 'ies'} in workspace ${viewer.scope.workspace}${expired ? ', expired and superseded ones included' : ''}.</p>
<table id="memories"><thead><tr><th>Title</th><th>Type</th><th>Tags</th><th>Content</th><th>Updated</th></tr></thead><tbody>
${listed.items.map((m) => html`<tr><td><a href="${base}/${m.id}">${m.title || m.id}</a> ${validityBadge(m, now)}</td><td>${m.memoryType}</td><td>${tags(m)}</td>
<td>${preview(m)}</td><td>${dateTime(m.updatedAt)}</td></tr>`)}</tbody></table>
<p>${offset > 0 ? html`<a href="${base}${query({ type, tag, expired, offset: Math.max(0, offset - PAGE_SIZE) })}">Newer</a> ` : ''}
${offset + PAGE_SIZE < listed.total ? html`<a href="${base}${query({ type, tag, expired, offset: offset + PAGE_SIZE })}">Older</a>` : ''}</p>`;
    }
    return page('Memories', viewer.chrome('memories'), html`
${param(req, 'deleted') ? html`<p class="notice">Memory ${param(req, 'deleted')} deleted.</p>` : ''}
<form class="filters" method="get" action="${base}" id="search">
  <label>Search <input type="text" name="q" value="${q ?? ''}" placeholder="words or a question"></label>
  <label>Mode <select name="search"><option value="semantic"${mode === 'semantic' ? html` selected` : ''}>semantic</option>
  <option value="hybrid"${mode === 'hybrid' ? html` selected` : ''}>hybrid</option></select></label>
  <label>Type <input type="text" name="type" value="${type ?? ''}" size="10"></label>
  <label>Tags (any) <input type="text" name="tag" value="${tag ?? ''}" size="14"></label>
  <label class="check"><input type="checkbox" name="expired" value="1" id="include-expired"${expired ? html` checked` : ''}> Include expired</label>
  <button>Go</button> <a href="${base}">Clear</a>
</form>${body}`);
  }));

  app.get<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'memory.read', async (req, _reply, viewer) => {
    const m = await deps.memories.find(viewer.scope, (req.params as { id: string }).id);
    const canWrite = viewer.principal.scopes.has('memories:write');
    return page(m.title || 'Memory', viewer.chrome('memories'), html`
<dl class="card"><dt>Id</dt><dd><code>${m.id}</code></dd><dt>Type</dt><dd>${m.memoryType}</dd><dt>Tags</dt><dd>${tags(m)}</dd>
<dt>Workspace</dt><dd>${m.scope.workspace}</dd><dt>Created</dt><dd>${dateTime(m.createdAt)} by ${m.createdBy}</dd>
<dt>Updated</dt><dd>${dateTime(m.updatedAt)} by ${m.updatedBy}</dd><dt>Accessed</dt><dd>${m.accessCount} time(s)</dd>
${await validityRows(deps, m)}</dl>
<h2>Content</h2><pre id="content">${m.content}</pre>
<h2>Metadata</h2><pre>${JSON.stringify(m.metadata, null, 2)}</pre>
${canWrite ? html`<p><a href="${base}/${m.id}/edit" id="edit">Edit</a></p>` : html`<p class="muted">This key lacks memories:write: read only.</p>`}
${supersedeForm(m, canWrite, viewer.session.csrfToken)}`);
  }));

  app.get<{ Params: { id: string } }>(`${base}/:id/edit`, signedIn(deps, 'memory.update', async (req, _reply, viewer) => {
    const m = await deps.memories.find(viewer.scope, (req.params as { id: string }).id);
    const csrf = csrfField(viewer.session.csrfToken);
    return page(`Edit ${m.title || m.id}`, viewer.chrome('memories'), html`
<form method="post" action="${base}/${m.id}" class="card" id="edit-form">${csrf}
  <p><label>Title <input type="text" name="title" value="${m.title}" size="60"></label></p>
  <p><label>Type <input type="text" name="memory_type" value="${m.memoryType}"></label></p>
  <p><label>Tags (comma separated) <input type="text" name="tags" value="${m.tags.join(', ')}" size="60"></label></p>
  <p><label>Content <textarea name="content" required>${m.content}</textarea></label></p>
  <button id="save">Save</button> <a href="${base}/${m.id}">Cancel</a>
</form>
<form method="post" action="${base}/${m.id}/delete" class="card">${csrf}
  <p>Deleting is permanent (a memory.deleted event is sent).</p><button id="delete">Delete this memory</button>
</form>`);
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'memory.update', async (req, _reply, viewer) => {
    const patch: MemoryPatch = {};
    const title = field(req, 'title');
    const content = field(req, 'content');
    const memoryType = field(req, 'memory_type')?.trim();
    const tagText = field(req, 'tags');
    if (title !== undefined) patch.title = title.trim();
    if (content !== undefined) patch.content = content;
    if (memoryType) patch.memoryType = memoryType;
    if (tagText !== undefined) patch.tags = tagList(tagText);
    const m = await deps.memories.update(viewer.scope, viewer.principal, (req.params as { id: string }).id, patch);
    return new SeeOther(`${base}/${m.id}`);
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/delete`, signedIn(deps, 'memory.delete', async (req, _reply, viewer) => {
    const { id } = await deps.memories.delete(viewer.scope, viewer.principal, (req.params as { id: string }).id);
    return new SeeOther(`${base}${query({ deleted: id })}`);
  }));
};
