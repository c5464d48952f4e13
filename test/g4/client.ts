import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Json } from '../support/test-app.ts';

/** A G4 client bound to one Bearer key (undefined: no Authorization header). */
export function g4(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const qs = (params: Record<string, string | number | boolean | undefined>) => {
    const entries = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)]);
    return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
  };
  return {
    headers: h,
    /** GET /v1/search; `body` is sent as a JSON body with the GET. */
    search: (params: Record<string, string | number | boolean | undefined>, body?: unknown) => app.inject({
      method: 'GET', url: `/v1/search${qs(params)}`,
      headers: body === undefined ? h : { ...h, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
    vector: (body: unknown) => app.inject({ method: 'POST', url: '/v1/search/vector', headers: h, payload: body as object }),
    suggestions: (params: Record<string, string | number | boolean | undefined>) =>
      app.inject({ method: 'GET', url: `/v1/search/suggestions${qs(params)}`, headers: h }),
    embed: (body: unknown) => app.inject({ method: 'POST', url: '/v1/embeddings', headers: h, payload: body as object }),
    /** GET /v1/analytics/search */
    analytics: (params: Record<string, string | number | boolean | undefined> = {}) =>
      app.inject({ method: 'GET', url: `/v1/analytics/search${qs(params)}`, headers: h }),
  };
}

export type G4Client = ReturnType<typeof g4>;

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Asserts the G4 success envelope and returns `data`. */
export function ok(res: LightMyRequestResponse, status = 200): Json {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Json;
  expect(body.success).toBe(true);
  expect(Object.keys(body).sort()).toEqual(['data', 'meta', 'success']);
  expect(body.meta.timestamp).toMatch(ISO);
  expect(body.meta.request_id).toBe(res.headers['x-request-id']);
  return body.data as Json;
}

export interface G4ErrorBody { code: string; message: string; details: { field: string; message: string }[] }

/** Asserts the G4 error envelope, its status and code; returns the error object. */
export function expectG4Error(res: LightMyRequestResponse, status: number, code: string): G4ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Json;
  expect(body.success).toBe(false);
  expect(Object.keys(body).sort()).toEqual(['error', 'meta', 'success']);
  expect(body.error.code, res.body).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  for (const d of body.error.details as Json[]) {
    expect(typeof d.field).toBe('string');
    expect(typeof d.message).toBe('string');
  }
  expect(body.meta.timestamp).toMatch(ISO);
  expect(body.meta.request_id).toMatch(/\S/);
  expect(body.meta.request_id).toBe(res.headers['x-request-id']);
  return body.error as G4ErrorBody;
}

export const fields = (e: G4ErrorBody) => e.details.map((d) => d.field).sort();
