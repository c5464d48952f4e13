import type { FastifyInstance } from 'fastify';

/** A G9 client (`/api/v1/webhooks`, Bearer) bound to one key and optional headers (X-Workspace-ID). */
export function g9(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const url = (id?: string) => `/api/v1/webhooks${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: url(), headers: h, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `${url()}${query ? `?${query}` : ''}`, headers: h }),
    get: (id: string) => app.inject({ method: 'GET', url: url(id), headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PUT', url: url(id), headers: h, payload: body as object }),
    delete: (id: string) => app.inject({ method: 'DELETE', url: url(id), headers: h }),
  };
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** `whsec_` + base64 of 32 bytes. */
export const GENERATED_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
