import type { FastifyInstance } from 'fastify';

/** POST /api/v1/batch with a Bearer key. */
export function batchClient(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  return (payload: unknown, extra: Record<string, string> = {}) => app.inject({
    method: 'POST', url: '/api/v1/batch', payload: payload as object,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers, ...extra },
  });
}
