import autocannon from 'autocannon';
import { cpuBetween } from '../lib/postgres-cpu.ts';
import { phase } from '../lib/progress.ts';
import { median, percentile } from '../lib/stats.ts';
import { jsonHeaders } from './client.ts';

export interface LoadOptions {
  label: string;
  baseUrl: string;
  apiKey: string;
  path: string;
  /** Called before every request; returns the JSON body to send (POST). */
  nextBody: () => string;
  /** GET instead of POST (then `nextPath`, if given, varies the query string). Default POST. */
  method?: 'GET' | 'POST';
  /** Called before every request for the path to use (e.g. a GET with a different query each time). */
  nextPath?: () => string;
  /** Added to the JSON + X-API-Key headers (e.g. `authorization: Bearer …` for the Bearer surfaces). */
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** An unrecorded run first, so that JIT, caches and the vector index are warm. */
  warmupSeconds: number;
  /**
   * CPU seconds so far of what serves the requests (the server process; a PostgreSQL database's backends by pid),
   * read around the measured run: LoadResult.cpu.
   */
  cpuProbe?: () => Promise<CpuSample>;
}

export interface CpuSample { server: number; database?: Map<number, number> }

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** From our own per-response timings (autocannon's histogram keeps whole milliseconds only). */
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** With LoadOptions.cpuProbe: CPU ms per request of the server process and of the database's backends. */
  cpu?: { serverMs: number; databaseMs: number | null };
}

function runOnce(options: LoadOptions, durationSeconds: number, record: boolean): Promise<LoadResult> {
  const latencies: number[] = [];
  const bar = phase(`${options.label}${record ? '' : ' (warm-up)'}`, durationSeconds, 's');
  let ticks = 0;
  return new Promise<LoadResult>((resolve, reject) => {
    const instance = autocannon({
      url: options.baseUrl,
      connections: options.connections,
      duration: durationSeconds,
      timeout: 30,
      headers: { ...jsonHeaders(options.apiKey), ...options.headers },
      requests: [{
        method: options.method ?? 'POST',
        path: options.path,
        setupRequest: (request) => (options.method === 'GET'
          ? { ...request, path: options.nextPath ? options.nextPath() : options.path }
          : { ...request, body: options.nextBody(), ...(options.nextPath ? { path: options.nextPath() } : {}) }),
      }],
    }, (error, result) => {
      bar.stop();
      if (error) {
        reject(error);
        return;
      }
      const requests = result['2xx'] + result.non2xx;
      const statusCodes: Record<string, number> = {};
      for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
      resolve({
        requests,
        seconds: result.duration,
        perSecond: requests / result.duration,
        p50Ms: median(latencies),
        p99Ms: percentile(latencies, 99),
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes,
      });
    });
    instance.on('tick', () => bar.update(Math.min(durationSeconds, ++ticks)));
    if (record) {
      instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      });
    }
  });
}

/** A warm-up run, then the measured run; throws if the warm-up already saw failures. */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSeconds > 0) {
    const warm = await runOnce(options, options.warmupSeconds, false);
    assertClean(options.label, warm, 'warm-up');
  }
  const before = await options.cpuProbe?.();
  const result = await runOnce(options, options.durationSeconds, true);
  const after = await options.cpuProbe?.();
  if (!before || !after) return result;
  const perRequest = (seconds: number) => (seconds * 1000) / Math.max(1, result.requests);
  return { ...result, cpu: {
    serverMs: perRequest(after.server - before.server),
    databaseMs: after.database ? perRequest(cpuBetween(before.database ?? new Map(), after.database)) : null,
  } };
}

export function assertClean(label: string, r: LoadResult, what = 'run'): void {
  if (r.non2xx > 0 || r.errors > 0 || r.requests === 0) {
    throw new Error(`${label} ${what}: ${r.non2xx} non-2xx responses and ${r.errors} errors (${r.timeouts} timeouts) ` +
      `in ${r.requests} responses; status codes ${JSON.stringify(r.statusCodes)}`);
  }
}
