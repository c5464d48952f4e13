import { EXAMPLE_UNIT_PRICES, type UnitPrices } from '../../core/analytics/cost-model.ts';
import { timeframeWindow, TIMEFRAMES, type Timeframe } from '../../core/analytics/report-window.ts';
import { param, signedIn } from '../context.ts';
import { html, jsonIsland } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { DASHBOARD_PREFIX, dateTime, page } from '../layout.ts';

const isTimeframe = (t: string | undefined): t is Timeframe => t !== undefined && (TIMEFRAMES as readonly string[]).includes(t);

const TIMEFRAME_LABELS: Record<Timeframe, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days', '90d': 'Last 90 days' };

/** Money as the cost model rounds it (6 decimals: small test traffic still shows). */
const usd = (x: number): string => `$${x.toFixed(6).replace(/0{1,4}$/, '')}`;

/** The charts of the page: one canvas each, drawn by assets/dashboard.js with Chart.js from the JSON island. */
const CHARTS = [
  { id: 'chart-requests', title: 'Requests and errors', type: 'line' },
  { id: 'chart-latency', title: 'Latency (ms): p50, p95, p99', type: 'line' },
  { id: 'chart-searches', title: 'Searches and memory operations', type: 'bar' },
  { id: 'chart-cost', title: 'Cost', type: 'line' },
] as const;

/**
 * Analytics: the G7 report (core/analytics) of the key's tenant and mode over a time range, in figures, tables and
 * Chart.js charts, with the search log's figures of the workspace (core/search/search-analytics.ts: top queries and
 * the queries that found nothing, which G7's fixed response shape has no room for). Like G7, any key that reads
 * memories may see it (every workspace: G7 reports per tenant and mode).
 */
export const analyticsRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/analytics`;
  app.get(base, signedIn(deps, 'analytics.read', async (req, _reply, viewer) => {
    const asked = param(req, 'timeframe');
    const timeframe: Timeframe = isTimeframe(asked) ? asked : '24h';
    const window = timeframeWindow(timeframe, deps.clock.now());
    const r = await deps.analyticsReport.report(viewer.principal.tenantId, viewer.principal.mode, window);
    const ts = r.time_series;
    const label = (d: Date) => (timeframe === '1h' || timeframe === '24h' ? d.toISOString().slice(11, 16) : d.toISOString().slice(0, 10));
    const data = {
      timeframe,
      labels: ts.map((p) => label(p.timestamp)),
      charts: [
        { id: 'chart-requests', type: 'line', series: [{ label: 'requests', values: ts.map((p) => p.requests) }, { label: 'errors', values: ts.map((p) => p.errors) }] },
        {
          id: 'chart-latency', type: 'line', series: [
            { label: 'p50', values: ts.map((p) => p.response_times.p50) }, { label: 'p95', values: ts.map((p) => p.response_times.p95) },
            { label: 'p99', values: ts.map((p) => p.response_times.p99) },
          ],
        },
        {
          id: 'chart-searches', type: 'bar', series: [
            { label: 'searches', values: ts.map((p) => p.search_queries) }, { label: 'memory operations', values: ts.map((p) => p.memory_operations) },
          ],
        },
        { id: 'chart-cost', type: 'line', series: [{ label: 'cost (USD)', values: ts.map((p) => p.cost) }] },
      ],
    };
    const granularity = timeframe === '1h' || timeframe === '24h' ? 'hour' : 'day';
    const [searches, zeroResultQueries, routes] = await Promise.all([
      deps.searchAnalytics.report(viewer.scope, { from: window.from, to: window.to, granularity }),
      deps.searchAnalytics.zeroResultQueries(viewer.scope, window),
      deps.analyticsReport.errorsByRoute(viewer.principal.tenantId, viewer.principal.mode, window),
    ]);
    const s = r.summary;
    const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
    const prices = deps.analyticsReport.prices;
    const examplePrices = (Object.keys(EXAMPLE_UNIT_PRICES) as (keyof UnitPrices)[]).every((k) => prices[k] === EXAMPLE_UNIT_PRICES[k]);
    const c = r.cost_breakdown;
    return page('Analytics', viewer.chrome('analytics'), html`
<form class="filters" method="get" action="${base}"><label>Time range <select name="timeframe">
${TIMEFRAMES.map((t) => html`<option value="${t}"${t === timeframe ? html` selected` : ''}>${TIMEFRAME_LABELS[t]}</option>`)}</select></label><button>Show</button></form>
<div class="columns">
<section class="card"><h2>Requests</h2><dl id="summary"><dt>Requests</dt><dd>${s.api_calls}</dd><dt>Success rate</dt><dd>${(s.success_rate * 100).toFixed(2)} %</dd>
<dt>Searches</dt><dd>${s.total_searches}</dd><dt>Memory operations</dt><dd>${s.total_operations}</dd><dt>Memories</dt><dd>${s.total_memories}</dd>
<dt>Active users</dt><dd>${s.active_users}</dd><dt>LLM tokens</dt><dd>${s.llm_tokens} (${s.model_calls} model calls)</dd></dl></section>
<section class="card" id="latency"><h2>Latency</h2><dl><dt>Average</dt><dd>${ms(r.response_times.avg)}</dd><dt>p50</dt><dd>${ms(r.response_times.p50)}</dd>
<dt>p95</dt><dd>${ms(r.response_times.p95)}</dd><dt>p99</dt><dd>${ms(r.response_times.p99)}</dd></dl>
<p class="muted">Of every request of the period; percentiles within ±9 %.</p></section>
<section class="card" id="cost"><h2>Cost</h2><dl><dt>Storage</dt><dd>${usd(c.storage)}</dd><dt>Compute</dt><dd>${usd(c.compute)}</dd>
<dt>API calls</dt><dd>${usd(c.api_calls)}</dd><dt>LLM</dt><dd>${usd(c.llm)}</dd><dt>Total</dt><dd><strong>${usd(c.total)}</strong></dd>
<dt>A 30-day month at this rate</dt><dd>${usd(c.projected_cost)}</dd></dl>
<p class="muted">Prices: ${prices.storagePerGbMonth} a GB-month stored, ${prices.computePerSecond} a second of request time,
${prices.apiCallsPer1000} per 1,000 requests, ${prices.llmPer1MTokens} per million LLM tokens.</p>
${examplePrices ? html`<p class="notice" id="example-prices">These are Mnemo's example prices, not anyone's real ones: set the four
<code>MNEMO_COST_*</code> variables (docs/configuration.md) to what your hosting costs.</p>` : ''}</section>
</div>
<div class="columns">
<section class="card" id="top-queries"><h2>Top queries in ${viewer.scope.workspace}</h2>
<p class="muted">${searches.totalSearches} search(es), ${searches.uniqueQueries} distinct; <strong id="zero-results">${searches.zeroResultSearches}</strong> found nothing.</p>
${searches.topQueries.length === 0 ? html`<p class="muted">No searches in this period.</p>` : html`<div class="table-scroll"><table>
<thead><tr><th>Query</th><th class="num">Searches</th><th>Average score</th></tr></thead><tbody>
${searches.topQueries.map((q) => html`<tr${q.avgScore === null ? html` class="zero-result"` : ''}><td>${q.query}</td><td class="num">${q.count}</td>
<td>${q.avgScore === null ? html`<span class="status status-failed">no results</span>` : q.avgScore.toFixed(3)}</td></tr>`)}</tbody></table></div>`}
</section>
<section class="card" id="zero-result-queries"><h2 id="zero-result-queries-title">Queries that found nothing in ${viewer.scope.workspace}</h2>
${zeroResultQueries.length === 0 ? html`<p class="muted">No search came back empty in this period.</p>` : html`<div class="table-scroll"><table aria-labelledby="zero-result-queries-title">
<thead><tr><th scope="col">Query</th><th scope="col" class="num">Searches</th><th scope="col">Last seen</th></tr></thead><tbody>
${zeroResultQueries.map((q) => html`<tr><td>${q.query}</td><td class="num">${q.count}</td><td>${dateTime(q.lastSeen)}</td></tr>`)}</tbody></table></div>
<p class="muted">Most frequent first: memories these searches looked for may be missing, or a lower threshold may find them.</p>`}
</section>
<section class="card" id="errors-by-route"><h2>Errors by route</h2>
${routes.length === 0 ? html`<p class="muted">No request answered an error in this period.</p>` : html`<div class="table-scroll"><table>
<thead><tr><th>Route</th><th class="num">Requests</th><th class="num">4xx</th><th class="num">5xx</th></tr></thead><tbody>
${routes.map((e) => html`<tr><td><code>${e.route}</code> <span class="muted">${e.surface}</span></td><td class="num">${e.requests}</td>
<td class="num">${e.clientErrors}</td><td class="num">${e.serverErrors}</td></tr>`)}</tbody></table></div>`}
</section>
</div>
<div class="charts">${CHARTS.map((ch) => html`<section class="card"><h2>${ch.title}</h2><div class="chart"><canvas id="${ch.id}" role="img" aria-label="${ch.title}"></canvas></div></section>`)}</div>
<p class="muted">Tenant ${viewer.principal.tenantId}, ${viewer.principal.mode} mode, all workspaces (top queries and queries that found nothing: this workspace); buckets as G7 cuts them.</p>
${jsonIsland('analytics-data', data)}`, ['chart.umd.min.js']);
  }));
};
