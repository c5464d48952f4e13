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

export function answeredRequest(req: FastifyRequest, reply: FastifyReply): AnsweredRequest {
  const p = req.principal;
  const pattern = req.routeOptions.url;
  return {
    tenantId: p?.tenantId ?? null, mode: p?.mode ?? null, keyId: p?.keyId ?? null, userId: p?.userId ?? null,
    surface: surfaceOfUrl(req.url) ?? 'other',
    route: pattern ? `${req.method} ${pattern}` : '(unmatched)',
    status: reply.statusCode,
    latencyMs: isStream(req, reply) ? null : reply.elapsedTime,
    bytesIn: byteCount(req.headers['content-length']),
    bytesOut: byteCount(reply.getHeader('content-length')),
  };
}

/** Path prefixes of the API generations, longest first where they nest. */
const SURFACES: [prefix: string, label: string][] = [
  ['/api/v1/memories', 'g1'], ['/api/v1/store', 'g1'], ['/api/v1/topics', 'g1'],
  ['/api/v1/memory', 'g2'],
  ['/api/v1/search', 'g3'],
  ['/v1/search', 'g4'], ['/v1/embeddings', 'g4'], ['/v1/analytics', 'g4'],
  ['/api/v1/embeddings', 'g5'],
  ['/api/v1/batch', 'g6'],
  ['/api/v1/analytics', 'g7'],
  ['/api/v1/stream', 'g8'],
  ['/api/v1/webhooks', 'g9'],
  ['/v1/webhooks', 'g10'], ['/v1/events', 'g10'],
  ['/v1/security', 'g11'],
];

/** The API generation a URL belongs to (`g1` … `g11`), or undefined. */
export function surfaceOfUrl(url: string): string | undefined {
  const path = url.split('?')[0]!;
  return SURFACES.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1];
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
}) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    deps.recordResponse?.(reply.statusCode);
    if (deps.recordRequest) {
      try {
        deps.recordRequest(answeredRequest(req, reply));
      } catch (err) {
        req.log.warn({ err }, 'request not measured');
      }
    }
    const p = req.principal;
    if (!p) return;
    const workspace = workspaceOrDefault(req);
    try {
      await deps.activity.touch({
        scope: { tenantId: p.tenantId, mode: p.mode, workspace }, userId: p.userId, keyId: p.keyId, surface: surfaceOfUrl(req.url),
      });
    } catch (err) {
      req.log.warn({ err }, 'user.activity not recorded');
    }
  };
}
