import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import type { AnsweredRequest } from '../../core/analytics/request-recorder.ts';
import { workspaceOrDefault } from './workspace.ts';

const byteCount = (v: unknown): number => {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/**
 * What the G7 measurement keeps of an answered request: the route pattern (never the URL, which would hold ids and
 * make every path its own row), the caller (none before authentication), the latency Fastify measured from arrival
 * to the end of the answer, and the bytes given by Content-Length (0 when absent, e.g. streams).
 */
/** A WebSocket upgrade or an SSE answer: its "latency" would be the connection's whole life. */
const isStream = (req: FastifyRequest, reply: FastifyReply): boolean =>
  typeof req.headers.upgrade === 'string' || String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream');

export function answeredRequest(req: FastifyRequest, reply: FastifyReply, surface: string | undefined): AnsweredRequest {
  const p = req.principal;
  const pattern = req.routeOptions.url;
  return {
    tenantId: p?.tenantId ?? null, mode: p?.mode ?? null, keyId: p?.keyId ?? null, userId: p?.userId ?? null,
    surface: surface ?? 'other',
    route: pattern ? `${req.method} ${pattern}` : '(unmatched)',
    status: reply.statusCode,
    latencyMs: isStream(req, reply) ? null : reply.elapsedTime,
    bytesIn: byteCount(req.headers['content-length']),
    bytesOut: byteCount(reply.getHeader('content-length')),
  };
}

/**
 * An `onResponse` hook for the root: every answered request counts for the health event's error rate, and every
 * authenticated one (the surface's auth guard left `req.principal`) may emit `user.activity`. Runs after the answer
 * is sent, so it adds nothing to response times; failures are logged, never surfaced.
 */
export function requestObserver(deps: {
  activity: Pick<ActivityTracker, 'touch'>;
  recordResponse?: ((status: number) => void) | undefined;
  /** G7 request measurement: only updates an in-memory aggregate (written in the background). */
  recordRequest?: ((r: AnsweredRequest) => void) | undefined;
  /** The generation of a URL (surface-of.ts). */
  surfaceOf: (url: string) => string | undefined;
}) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    deps.recordResponse?.(reply.statusCode);
    const surface = deps.surfaceOf(req.url);
    if (deps.recordRequest) {
      try {
        deps.recordRequest(answeredRequest(req, reply, surface));
      } catch (err) {
        req.log.warn({ err }, 'request not measured');
      }
    }
    const p = req.principal;
    if (!p) return;
    const workspace = workspaceOrDefault(req);
    try {
      await deps.activity.touch({
        scope: { tenantId: p.tenantId, mode: p.mode, workspace }, userId: p.userId, keyId: p.keyId, surface,
      });
    } catch (err) {
      req.log.warn({ err }, 'user.activity not recorded');
    }
  };
}
