import type { FastifyRequest } from 'fastify';
import { validationError } from '../../core/errors.ts';
import type { Memory, MemoryFilter } from '../../core/memories/memory.types.ts';
import { highlight } from '../../core/search/highlights.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import { authorize } from '../../core/operations/runner.ts';
import { param, signedIn } from '../context.ts';
import { listOf } from '../forms.ts';
import { html, trusted, type SafeHtml } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { RELEVANT_SCORE } from '../../core/search/score-calibration.ts';
import { DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { supersedeForm, validityBadge, validityRows } from './memory-history.ts';
import { selectBox, selectionControls } from './manage-memories.ts';

const PAGE_SIZE = 25;
/** The threshold unless the page asks for another: every surface's default, semantic and hybrid alike (docs/api.md, "Scores"). */
const DEFAULT_THRESHOLD = RELEVANT_SCORE;
/** Hybrid's weights: MCP memory_search's and G3's defaults. */
const SEMANTIC_WEIGHT = 0.7;
const KEYWORD_WEIGHT = 0.3;

/** The threshold an empty answer suggests: 0.2 lower (0.1 lower from 0.2 down), or null at 0 already. */
function lowerThreshold(t: number): number | null {
  if (t <= 0) return null;
  return Math.max(0, Math.round((t - (t > 0.2 ? 0.2 : 0.1)) * 100) / 100);
}

/** Why a hit is there: its similarity, and for hybrid the two parts of its score. */
function explain(mode: 'semantic' | 'hybrid', h: ScoredHit): SafeHtml {
  const similarity = h.similarity ?? 0;
  if (mode === 'semantic') return html`<div class="explain">similarity ${similarity.toFixed(3)}</div>`;
  const keyword = h.keywordScore ?? 0;
  return html`<div class="explain" data-semantic="${(SEMANTIC_WEIGHT * similarity).toFixed(3)}" data-keyword="${(KEYWORD_WEIGHT * keyword).toFixed(3)}">semantic ${SEMANTIC_WEIGHT} × ${similarity.toFixed(3)}
 + keyword ${KEYWORD_WEIGHT} × ${keyword.toFixed(3)}</div>`;
}

function filterOf(req: FastifyRequest): { filter: MemoryFilter; type?: string | undefined; tag?: string | undefined } {
  const type = param(req, 'type');
  const tag = param(req, 'tag');
  return { filter: { ...(type ? { types: [type] } : {}), ...(tag ? { tagsAny: listOf(tag) } : {}) }, type, tag };
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
        ? await deps.search.hybrid(ctx, { query: q, limit: PAGE_SIZE, filter, semanticWeight: SEMANTIC_WEIGHT, keywordWeight: KEYWORD_WEIGHT, rerank: false, threshold, validity })
        : await deps.search.semantic(ctx, { query: q, limit: PAGE_SIZE, filter, threshold, validity });
      const lower = lowerThreshold(threshold);
      body = html`<p id="search-summary">${outcome.hits.length === outcome.total ? '' : `The best ${outcome.hits.length} of `}${outcome.total} memor${outcome.total === 1 ? 'y' : 'ies'} for “${q}”.</p>
<p class="muted" id="search-rule">${mode === 'hybrid'
    ? html`Hybrid search: a memory is kept when its relevance (its calibrated similarity, raised by the share of the query's words it holds)
      reaches the threshold <strong>${threshold}</strong>; the kept ones are ordered by ${SEMANTIC_WEIGHT} × similarity + ${KEYWORD_WEIGHT} × keyword score
      (keyword relevance relative to the best keyword match). ${'semanticResults' in outcome ? `The semantic part found ${outcome.semanticResults}, the keyword part ${outcome.keywordResults}.` : ''}`
    : html`Semantic search: a memory is kept when its calibrated similarity to the query reaches the threshold <strong>${threshold}</strong>
      (0.7 means relevant for the configured model, <code>${outcome.embeddingModel}</code>).`}</p>
${outcome.hits.length === 0 ? html`<p class="notice" id="no-results">No memory reaches the threshold ${threshold} for this query.
${lower === null ? '' : html`<a id="lower-threshold" href="${base}${query({ q, search: mode, threshold: lower, type, tag, expired })}">Search again with threshold ${lower}</a>`}</p>` : html`
<div class="table-scroll"><table id="results"><thead><tr><th>Memory</th><th>Score</th><th>Why it matched</th><th>Tags</th></tr></thead><tbody>
${outcome.hits.map((h: ScoredHit) => {
        // highlight() escapes the text itself and adds only <mark>: safe to insert as markup.
        const snippets = highlight(`${h.memory.title}\n${h.memory.content}`, q);
        return html`<tr><td><a href="${base}/${h.memory.id}">${h.memory.title || h.memory.id}</a> ${validityBadge(h.memory, now)}</td><td>${h.score.toFixed(3)}</td>
<td class="highlights">${explain(mode, h)}${snippets.length > 0 ? snippets.map((s) => html`<div>${trusted(s)}</div>`) : html`<div class="muted">No query word appears in it: ${preview(h.memory)}</div>`}</td>
<td>${tags(h.memory)}</td></tr>`;
      })}</tbody></table></div>`}`;
    } else {
      const listed = await deps.memories.list(viewer.scope, { filter, limit: PAGE_SIZE, offset, sortBy: 'updated_at', sortOrder: 'desc' }, validity);
      body = html`<p class="muted">${listed.total} memor${listed.total === 1 ? 'y' : 'ies'} in workspace ${viewer.scope.workspace}${expired ? ', expired and superseded ones included' : ''}.</p>
<div class="table-scroll"><table id="memories"><thead><tr><th>Select</th><th>Title</th><th>Type</th><th>Tags</th><th>Content</th><th>Updated</th></tr></thead><tbody>
${listed.items.map((m) => html`<tr><td>${selectBox(m)}</td><td><a href="${base}/${m.id}">${m.title || m.id}</a> ${validityBadge(m, now)}</td><td>${m.memoryType}</td><td>${tags(m)}</td>
<td>${preview(m)}</td><td>${dateTime(m.updatedAt)}</td></tr>`)}</tbody></table></div>
${selectionControls(req, viewer)}
<p>${offset > 0 ? html`<a href="${base}${query({ type, tag, expired, offset: Math.max(0, offset - PAGE_SIZE) })}">Newer</a> ` : ''}
${offset + PAGE_SIZE < listed.total ? html`<a href="${base}${query({ type, tag, expired, offset: offset + PAGE_SIZE })}">Older</a>` : ''}</p>`;
    }
    return page('Memories', viewer.chrome('memories'), html`
${param(req, 'deleted') ? html`<p class="notice">Memory ${param(req, 'deleted')} deleted.</p>` : ''}
<form class="filters" method="get" action="${base}" id="search">
  <label>Search <input type="text" name="q" value="${q ?? ''}" placeholder="words or a question"></label>
  <label>Mode <select name="search"><option value="semantic"${mode === 'semantic' ? html` selected` : ''}>semantic</option>
  <option value="hybrid"${mode === 'hybrid' ? html` selected` : ''}>hybrid</option></select></label>
  <label>Threshold <input type="number" name="threshold" value="${threshold}" min="0" max="1" step="0.05"></label>
  <label>Type <input type="text" name="type" value="${type ?? ''}" size="10"></label>
  <label>Tags (any) <input type="text" name="tag" value="${tag ?? ''}" size="14"></label>
  <label class="check"><input type="checkbox" name="expired" value="1" id="include-expired"${expired ? html` checked` : ''}> Include expired</label>
  <button class="primary">Go</button> <a href="${base}">Clear</a>
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
};
