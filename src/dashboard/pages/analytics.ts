import { timeframeWindow, TIMEFRAMES, type Timeframe } from '../../core/analytics/report-window.ts';
import { param, signedIn } from '../context.ts';
import { html, jsonIsland } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { DASHBOARD_PREFIX, page } from '../layout.ts';

const isTimeframe = (t: string | undefined): t is Timeframe => t !== undefined && (TIMEFRAMES as readonly string[]).includes(t);

/** The charts of the page: one canvas each, drawn by assets/dashboard.js with Chart.js from the JSON island. */
const CHARTS = [
  { id: 'chart-requests', title: 'Requests and errors', type: 'line' },
  { id: 'chart-latency', title: 'Latency (ms): p50, p95, p99', type: 'line' },
  { id: 'chart-searches', title: 'Searches and memory operations', type: 'bar' },
  { id: 'chart-cost', title: 'Cost', type: 'line' },
] as const;

/**
 * Analytics: the G7 report (core/analytics) of the key's tenant and mode over a timeframe, as Chart.js charts. Like
 * G7, any valid key of the tenant may see it (every workspace: G7 reports per tenant and mode).
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
    const s = r.summary;
    return page('Analytics', viewer.chrome('analytics'), html`
<form class="filters" method="get" action="${base}"><label>Timeframe <select name="timeframe">
${TIMEFRAMES.map((t) => html`<option${t === timeframe ? html` selected` : ''}>${t}</option>`)}</select></label><button>Show</button></form>
<dl class="card" id="summary"><dt>Requests</dt><dd>${s.api_calls}</dd><dt>Success rate</dt><dd>${(s.success_rate * 100).toFixed(2)} %</dd>
<dt>Average latency</dt><dd>${s.avg_response_time === null ? '—' : `${s.avg_response_time} ms`}</dd><dt>Searches</dt><dd>${s.total_searches}</dd>
<dt>Memory operations</dt><dd>${s.total_operations}</dd><dt>Memories</dt><dd>${s.total_memories}</dd><dt>Active users</dt><dd>${s.active_users}</dd>
<dt>LLM tokens</dt><dd>${s.llm_tokens} (${s.model_calls} model calls)</dd><dt>Cost this period</dt><dd>${s.cost_this_period}</dd></dl>
<div class="charts">${CHARTS.map((c) => html`<section class="card"><h2>${c.title}</h2><div class="chart"><canvas id="${c.id}" role="img" aria-label="${c.title}"></canvas></div></section>`)}</div>
<p class="muted">Tenant ${viewer.principal.tenantId}, ${viewer.principal.mode} mode, all workspaces; buckets as G7 cuts them (latency percentiles within ±9 %).</p>
${jsonIsland('analytics-data', data)}`, ['chart.umd.min.js']);
  }));
};
