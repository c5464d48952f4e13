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
  /** The generation of a URL (surfaces/http-kit/surface-of.ts). */
  surfaceOf: (url: string) => string | undefined;
}) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const pattern = req.is404 ? undefined : req.routeOptions.url;
    const route = pattern ?? 'unmatched';
    options.record({
      surface: options.surfaceOf(pattern ?? req.url) ?? SERVER_SURFACE,
      route,
      method: METHODS.has(req.method) ? req.method : 'other',
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  };
}
