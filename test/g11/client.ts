import type { FastifyInstance } from 'fastify';

/** A G11 secrets client (`/v1/security/secrets`, Authorization: Bearer) bound to one key. */
export function g11(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const url = (name?: string) => `/v1/security/secrets${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  return {
    create: (body: unknown, extra: Record<string, string> = {}) => app.inject({ method: 'POST', url: url(), headers: { ...h, ...extra }, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `${url()}${query ? `?${query}` : ''}`, headers: h }),
    get: (name: string, query = '') => app.inject({ method: 'GET', url: `${url(name)}${query ? `?${query}` : ''}`, headers: h }),
    update: (name: string, body: unknown, extra: Record<string, string> = {}) => app.inject({ method: 'PUT', url: url(name), headers: { ...h, ...extra }, payload: body as object }),
    delete: (name: string) => app.inject({ method: 'DELETE', url: url(name), headers: h }),
  };
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A G11 API-keys client (`/v1/security/api-keys`, Authorization: Bearer) bound to one key. */
export function g11Keys(app: FastifyInstance, key: string | undefined) {
  const h = key === undefined ? {} : { authorization: `Bearer ${key}` };
  const url = (id?: string) => `/v1/security/api-keys${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: url(), headers: h, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `${url()}${query ? `?${query}` : ''}`, headers: h }),
    get: (id: string) => app.inject({ method: 'GET', url: url(id), headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PUT', url: url(id), headers: h, payload: body as object }),
    revoke: (id: string) => app.inject({ method: 'DELETE', url: url(id), headers: h }),
    /** No body unless one is given: a client may rotate with a bare POST. */
    rotate: (id: string, body?: unknown) => app.inject({
      method: 'POST', url: `${url(id)}/rotate`, headers: h, ...(body === undefined ? {} : { payload: body as object }),
    }),
  };
}

/** A G11 audit-log client (`/v1/security/audit-logs`) bound to one key. */
export function g11Audit(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  return {
    list: (query = '') => app.inject({ method: 'GET', url: `/v1/security/audit-logs${query ? `?${query}` : ''}`, headers: h }),
    get: (id: string) => app.inject({ method: 'GET', url: `/v1/security/audit-logs/${encodeURIComponent(id)}`, headers: h }),
    export: (body: unknown) => app.inject({ method: 'POST', url: '/v1/security/audit-logs/export', headers: h, payload: body as object }),
  };
}

/** A G11 webhooks client (`/v1/security/webhooks`) bound to one key. */
export function g11Hooks(app: FastifyInstance, key: string | undefined) {
  const h = key === undefined ? {} : { authorization: `Bearer ${key}` };
  const url = (id?: string) => `/v1/security/webhooks${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: url(), headers: h, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `${url()}${query ? `?${query}` : ''}`, headers: h }),
    get: (id: string) => app.inject({ method: 'GET', url: url(id), headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PUT', url: url(id), headers: h, payload: body as object }),
    delete: (id: string) => app.inject({ method: 'DELETE', url: url(id), headers: h }),
  };
}
