import autocannon from 'autocannon';
import { percentile } from './stats.ts';

/** One node's share of the clients. */
export interface LoadTarget {
  url: string;
  connections: number;
}

export interface SplitLoadResult {
  seconds: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Per target, in the order given: requests answered 2xx. */
  perTarget: number[];
  /** Everything that was not a 2xx answer (status, socket error or timeout), summed over the targets. */
  failures: number;
  statusCodes: Record<string, number>;
}

/**
 * Keep-alive POST load (autocannon) on several nodes at once, `connections` each, for the same `durationSeconds`,
 * every request's body from the one shared `nextBody` (so both nodes draw from the same queries): the clients of one
 * deployment behind a balancer that splits them evenly. Latency percentiles are over every 2xx answer of every target.
 */
export async function splitLoad(targets: readonly LoadTarget[], o: {
  path: string; headers: Record<string, string>; nextBody: () => string; durationSeconds: number;
}): Promise<SplitLoadResult> {
  const latencies: number[] = [];
  const results = await Promise.all(targets.map((t) => new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url: t.url, connections: t.connections, duration: o.durationSeconds, timeout: 30, headers: o.headers,
      requests: [{ method: 'POST', path: o.path, setupRequest: (request) => ({ ...request, body: o.nextBody() }) }],
    }, (error, result) => (error ? reject(error) : resolve(result)));
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  })));
  const seconds = Math.max(...results.map((r) => r.duration));
  const statusCodes: Record<string, number> = {};
  for (const r of results) {
    for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  const perTarget = results.map((r) => r['2xx']);
  const requests = perTarget.reduce((a, b) => a + b, 0);
  return {
    seconds, requests, perSecond: requests / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), perTarget,
    failures: results.reduce((a, r) => a + r.non2xx + r.errors, 0), statusCodes,
  };
}
