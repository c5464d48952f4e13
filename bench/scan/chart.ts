import * as vega from 'vega';
import { median } from '../lib/stats.ts';
import type { ScanCase } from './suite.ts';

/**
 * An SVG line chart of p50 latency against corpus size, one line per engine (and per dimension count), from the scan
 * suite's cases: a plain Vega spec rendered headless (vega-lite would need Node 22).
 */
export async function latencyChart(cases: readonly ScanCase[]): Promise<string> {
  const dims = [...new Set(cases.map((c) => c.dims))];
  const label = (engine: string, d: number) => (dims.length > 1 ? `${engine}, ${d} dims` : engine);
  const values = cases.flatMap((c) => [
    { rows: c.rows, ms: median(c.pooledMs), series: label('Mnemo (worker threads)', c.dims) },
    { rows: c.rows, ms: median(c.inlineMs), series: label('Mnemo (1 thread)', c.dims) },
    { rows: c.rows, ms: median(c.vecMs), series: label('sqlite-vec vec0 (exact)', c.dims) },
    { rows: c.rows, ms: median(c.plainMs), series: label('plain JS scan (before)', c.dims) },
  ]);
  const title = `Exact top-10 search, p50 latency (${dims.join(' and ')} dims, in process)`;
  const spec: vega.Spec = {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width: 560,
    height: 340,
    padding: 8,
    background: 'white',
    title: { text: title, fontSize: 14 },
    data: [{ name: 'points', values }],
    scales: [
      { name: 'x', type: 'log', domain: { data: 'points', field: 'rows' }, range: 'width', nice: false, zero: false },
      // Log scale: the engines differ by an order of magnitude or more.
      { name: 'y', type: 'log', domain: { data: 'points', field: 'ms' }, range: 'height', nice: true },
      { name: 'color', type: 'ordinal', domain: { data: 'points', field: 'series' }, range: 'category' },
    ],
    axes: [
      { orient: 'bottom', scale: 'x', title: 'vectors in the workspace', values: [...new Set(cases.map((c) => c.rows))], format: '~s' },
      { orient: 'left', scale: 'y', title: 'p50 latency (ms, log scale)', grid: true, format: '~s' },
    ],
    legends: [{ fill: 'color', stroke: 'color', orient: 'right', symbolType: 'stroke', labelLimit: 260 }],
    marks: [
      {
        type: 'group',
        from: { facet: { name: 'series', data: 'points', groupby: 'series' } },
        marks: [
          {
            type: 'line',
            from: { data: 'series' },
            encode: { enter: {
              x: { scale: 'x', field: 'rows' }, y: { scale: 'y', field: 'ms' }, stroke: { scale: 'color', field: 'series' }, strokeWidth: { value: 2 },
            } },
          },
          {
            type: 'symbol',
            from: { data: 'series' },
            encode: { enter: { x: { scale: 'x', field: 'rows' }, y: { scale: 'y', field: 'ms' }, fill: { scale: 'color', field: 'series' }, size: { value: 30 } } },
          },
        ],
      },
    ],
  };
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
