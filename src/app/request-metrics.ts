import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestSample } from '../adapters/metrics/metrics.registry.ts';

/** Methods kept as labels; anything else (Fastify routes a few more) is counted as `other`, so labels stay bounded. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The surface label of routes outside every API generation: health, docs, OpenAPI, /metrics. */
export const SERVER_SURFACE = 'server';

/**
 * An `onResponse` hook counting every answered request. Labels are bounded: `route` is the route's pattern
 * (`/api/v1/memories/:id`), or `unmatched` when no route matched (a scanner's random paths would otherwise make a
 * series each); `surface` is the generation whose prefix the path falls under (`g1` … `g11`), else `server`.
 */
export function requestMetricsHook(options: {
  record: (sample: RequestSample) => void;
  /** [URL prefix, surface label] of every mounted surface. */
  prefixes: readonly (readonly [string, string])[];
}) {
  const surfaceOf = (path: string): string =>
    options.prefixes.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1] ?? SERVER_SURFACE;
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const pattern = req.is404 ? undefined : req.routeOptions.url;
    const route = pattern ?? 'unmatched';
    options.record({
      surface: surfaceOf(pattern ?? req.url.split('?')[0]!),
      route,
      method: METHODS.has(req.method) ? req.method : 'other',
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  };
}

/** `G1 memories` → `g1`: the generation, as the label. */
export const surfaceLabel = (name: string): string => name.split(' ')[0]!.toLowerCase();
