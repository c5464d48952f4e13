import type { Command } from 'commander';
import { fmt, percentile, median } from './stats.ts';
import { SEARCH_PATH, timedClient } from '../http/client.ts';

type Client = ReturnType<typeof timedClient>;

/** The options both engine benches (SQLite's and PostgreSQL's) take. */
export const withEngineOptions = (command: Command): Command => command
  .option('--sizes <list>', 'memories in the one workspace (comma-separated)', '10000,100000')
  .option('--dims <n>', 'hashing embedder dimensions (8..1024)', '512')
  .option('--queries <n>', 'measured single-client queries (after 5 warm-up queries)', '60')
  .option('--clients <n>', 'concurrent search clients', '8')
  .option('--duration <s>', 'seconds of the concurrent run', '15')
  .option('--threads <n>', 'MNEMO_SEARCH_THREADS of the server (default: its own default, the cores available)');

/** Those options as parsed. */
export interface EngineOptions { sizes: string; dims: string; queries: string; clients: string; duration: string; threads?: string }

/** The G1 body every engine run sends: limit 10, threshold 0 (every memory scored and counted). */
export const engineSearchBody = (query: string) => JSON.stringify({ query, limit: 10, threshold: 0 });

/**
 * The first search, sent at once and repeated until answered: a refusal (503 while the server sheds load, 408 when
 * the load outlasts the search timeout) is counted, not fatal, for up to two minutes.
 */
export async function firstSearch(c: Client, query: string): Promise<{ ms: number; refusals: number }> {
  const t0 = performance.now();
  let answer = await c.call('POST', SEARCH_PATH, engineSearchBody(query));
  let refusals = 0;
  while ((answer.status === 503 || answer.status === 408) && performance.now() - t0 < 120_000) {
    refusals++;
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await c.call('POST', SEARCH_PATH, engineSearchBody(query));
  }
  if (answer.status !== 200) throw new Error(`first search answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  return { ms: performance.now() - t0, refusals };
}

export interface ConcurrentRun {
  searches: number;
  perSecond: number;
  p50: number;
  healthP99: number;
  healthMax: number;
  healthCount: number;
}

/** `clients` keep-alive search loops for `durationS` seconds while `GET /health` is polled every 20 ms beside them. */
export async function searchesWithHealth(server: { url: string }, key: string, c: Client, o: {
  clients: number; durationS: number; queries: readonly string[];
}): Promise<ConcurrentRun> {
  const health = timedClient(server.url, key, 1);
  const healthMs: number[] = [];
  const searchMs: number[] = [];
  let stop = false;
  const poll = (async () => {
    while (!stop) {
      const r = await health.call('GET', '/health');
      if (r.status !== 200) throw new Error(`/health answered ${r.status}`);
      healthMs.push(r.ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const start = performance.now();
  try {
    await Promise.all(Array.from({ length: o.clients }, async (_, k) => {
      let i = k * 17;
      while (performance.now() - start < o.durationS * 1000) {
        const r = await c.call('POST', SEARCH_PATH, engineSearchBody(o.queries[i++ % o.queries.length]!));
        if (r.status !== 200) throw new Error(`search answered ${r.status}: ${r.text.slice(0, 200)}`);
        searchMs.push(r.ms);
      }
    }));
  } finally {
    stop = true;
    await poll.catch(() => undefined);
    health.close();
  }
  const elapsed = (performance.now() - start) / 1000;
  return {
    searches: searchMs.length, perSecond: searchMs.length / elapsed, p50: median(searchMs),
    healthP99: percentile(healthMs, 99), healthMax: Math.max(...healthMs), healthCount: healthMs.length,
  };
}

/** One G1 search: its time and the ids of its hits, best first. */
export async function timedG1(c: Client, query: string): Promise<{ ms: number; ids: string[] }> {
  const r = await c.call('POST', SEARCH_PATH, engineSearchBody(query));
  if (r.status !== 200) throw new Error(`search answered ${r.status}`);
  return { ms: r.ms, ids: (JSON.parse(r.text) as { data: { results: { id: string }[] } }).data.results.map((hit) => hit.id) };
}

/** Per query, the share of the exact top 10 found in G1's top 10. */
export const recallAt10 = (found: readonly string[], exact: ReadonlySet<string>): number =>
  found.filter((id) => exact.has(id)).length / Math.max(1, exact.size);

/** What both engine benches report of a size's restart and memory. */
export interface RestartFigures {
  firstSearchMs: number;
  firstRefusals: number;
  /** Spawn to `listening on` of the restarted server. */
  restartMs: number;
  rssMiB: number;
  baseRssMiB: number;
  floatsMiB: number;
  load: number;
}

/** The raw float bytes of `size` vectors of `dims`, in MiB. */
export const floatsMiB = (size: number, dims: number): number => (size * dims * 4) / (1024 * 1024);

/** A table's recall@10 cell: the mean over the queries, then the worst. */
export const recallCell = (recalls: readonly number[]): string =>
  `${(recalls.reduce((a, b) => a + b, 0) / recalls.length).toFixed(3)}, ${Math.min(...recalls).toFixed(1)}`;

/** A table's cells: spawn → listening | first search after listening | RSS (base) | (RSS − base) / raw floats. */
export const restartCells = (r: RestartFigures): string =>
  `${fmt(r.restartMs, 0)} | ${fmt(r.firstSearchMs, 0)}${r.firstRefusals > 0 ? ` (after ${r.firstRefusals} × 503/408)` : ''} | `
  + `${fmt(r.rssMiB, 0)} (${fmt(r.baseRssMiB, 0)}) | ${((r.rssMiB - r.baseRssMiB) / r.floatsMiB).toFixed(2)}×`;
