import type { FastifyRequest } from 'fastify';
import { rangeWindow } from '../../core/analytics/report-window.ts';
import type { Memory } from '../../core/memories/memory.types.ts';
import { signedIn, type Viewer } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { DASHBOARD_PREFIX, dateTime, page } from '../layout.ts';
import { may } from '../permissions.ts';

const RECENT = 5;
const DAY_MS = 86_400_000;

/** A figure of the overview: a count with what it counts, linking to the page that lists it. */
const stat = (id: string, figure: number | string, label: string, href: string | null): SafeHtml => html`<p class="card stat" id="${id}">
<span class="figure">${figure}</span>${href === null ? label : html`<a href="${href}">${label}</a>`}</p>`;

/** Today's searches and errors of the tenant and mode (every workspace, as Analytics shows them), from the G7 report. */
async function today(deps: PageDeps, viewer: Viewer) {
  const now = deps.clock.now();
  const midnight = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
  const r = await deps.analyticsReport.report(viewer.principal.tenantId, viewer.principal.mode, rangeWindow(midnight, new Date(now.getTime() + 1), 'hour'));
  return { searches: r.summary.total_searches, errors: r.time_series.reduce((n, p) => n + p.errors, 0), requests: r.summary.api_calls };
}

function healthCard(h: Awaited<ReturnType<PageDeps['health']>>): SafeHtml {
  const e = h.embeddings;
  const reindex = e.reindex === null
    ? html`<span class="status status-failed">unknown</span> (the store did not answer)`
    : e.reindex.state === 'complete'
      ? html`<span class="status status-ok">complete</span> every memory (${e.reindex.total}) has a vector of this model`
      : html`<span class="status status-pending">reindex needed</span> ${e.reindex.done} of ${e.reindex.total} memories have a vector of this model: run <code>npx mnemo reindex</code>`;
  return html`<section class="card" id="health"><h2>Health</h2><dl>
<dt>Store</dt><dd>${h.storage.kind} <span class="status status-${h.storage.ok ? 'ok' : 'failed'}">${h.storage.ok ? 'answering' : 'not answering'}</span></dd>
<dt>Embeddings</dt><dd><code>${e.model}</code>, ${e.dimensions} dimensions</dd>
<dt>Vectors</dt><dd>${reindex}</dd>
${e.other_models.length > 0 ? html`<dt>Other models</dt><dd>${e.other_models.map((m) => html`<code>${m.model}</code> (${m.vectors} vectors) `)}</dd>` : ''}
</dl><p class="muted">As <code>GET /health</code> reports it.</p></section>`;
}

/** What a new install needs: a key from the CLI, an MCP client connected, a first memory (the README's quick start). */
function firstSteps(req: FastifyRequest): SafeHtml {
  const mcpUrl = `${req.protocol}://${req.host}/mcp`;
  return html`<section class="card" id="first-steps"><h2>First steps</h2>
<p>This workspace holds no memories yet.</p>
<ol class="steps">
<li>Create a key for each person or AI tool, in the server's directory (the CLI must see the same data directory):
<pre>npx mnemo keys create --user claude --tier pro --scopes memories:read,memories:write,mcp:access --json</pre></li>
<li>Connect an MCP client to <code>${mcpUrl}</code> with the header <code>Authorization: Bearer mnemo_live_…</code>, e.g. with Claude Code:
<pre>claude mcp add --transport http mnemo ${mcpUrl} --header "Authorization: Bearer mnemo_live_…"</pre></li>
<li>Or store a memory over REST and search it:
<pre>curl -s ${req.protocol}://${req.host}/api/v1/memories -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \\
  -d '{"title":"Deploy notes","content":"We deploy with blue/green on Fridays"}'</pre></li>
</ol>
<p class="muted">The README's quick start has the rest: search thresholds, MCP over stdio, secrets behind an approval.</p></section>`;
}

const activityRow = (m: Memory): SafeHtml => html`<tr><td><a href="${DASHBOARD_PREFIX}/memories/${m.id}">${m.title || m.id}</a></td>
<td>${m.createdAt.getTime() === m.updatedAt.getTime() ? 'created' : 'updated'} by ${m.updatedBy}</td><td>${dateTime(m.updatedAt)}</td></tr>`;

/**
 * The landing page: the workspace's memories, today's searches and errors, what waits for a person (approvals,
 * reviews), the latest changes and the health of the store and the model. Each figure comes from the core service
 * of the page that lists it, and is shown only to a key that may open that page.
 */
export const overviewRoutes: RouteRegistrar = (app, deps) => {
  app.get(DASHBOARD_PREFIX, signedIn(deps, ['memory.list', 'analytics.read', 'mcp.approval_list', 'memory.ingest_read'], async (req, _reply, viewer) => {
    const p = viewer.principal;
    const readsMemories = may('memory.list', p);
    const [memories, usage, approvals, reviews, health] = await Promise.all([
      readsMemories ? deps.memories.list(viewer.scope, { filter: {}, limit: RECENT, offset: 0, sortBy: 'updated_at', sortOrder: 'desc' }) : null,
      may('analytics.read', p) ? today(deps, viewer) : null,
      may('mcp.approval_list', p) ? deps.mcpApprovals.list(p, { status: 'pending', limit: 1, cursor: null }) : null,
      may('memory.ingest_read', p) ? deps.ingestion.list(viewer.scope, { state: 'pending_review', limit: 1, offset: 0 }) : null,
      deps.health(),
    ]);
    const base = DASHBOARD_PREFIX;
    return page('Overview', viewer.chrome('overview'), html`
<div class="stats">
${memories ? stat('stat-memories', memories.total, `memor${memories.total === 1 ? 'y' : 'ies'} in ${viewer.scope.workspace}`, `${base}/memories`) : ''}
${usage ? stat('stat-searches', usage.searches, 'searches today', `${base}/analytics?timeframe=24h`) : ''}
${usage ? stat('stat-errors', usage.errors, `errors today (of ${usage.requests} requests)`, `${base}/analytics?timeframe=24h`) : ''}
${approvals ? stat('stat-approvals', approvals.total, 'approvals waiting', `${base}/approvals`) : ''}
${reviews ? stat('stat-reviews', reviews.total, 'ingestions to review', `${base}/reviews`) : ''}
</div>
${memories?.total === 0 ? firstSteps(req) : ''}
<div class="columns">
${memories && memories.items.length > 0 ? html`<section class="card" id="activity"><h2>Recent changes in ${viewer.scope.workspace}</h2>
<div class="table-scroll"><table><thead><tr><th>Memory</th><th>Change</th><th>When</th></tr></thead><tbody>${memories.items.map(activityRow)}</tbody></table></div>
${may('audit.list', p) ? html`<p><a href="${base}/audit">Everything recorded in the audit log</a></p>` : ''}</section>` : ''}
${healthCard(health)}
</div>
${readsMemories ? '' : html`<p class="notice">This key has no <code>memories:read</code> scope: the sections it may open are in the navigation above.</p>`}`);
  }));
};
