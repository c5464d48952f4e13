import type { FastifyInstance } from 'fastify';

/** `GET /api/v1/analytics` with a query string, as one key. */
export function analyticsClient(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  return (query = '', extra: Record<string, string> = {}) => app.inject({
    method: 'GET', url: `/api/v1/analytics${query === '' ? '' : `?${query}`}`,
    headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers, ...extra },
  });
}
