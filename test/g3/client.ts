import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** A G3 client bound to one Bearer key (undefined: no Authorization header). */
export function g3(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const post = (path: string) => (body: unknown) =>
    app.inject({ method: 'POST', url: `/api/v1/search${path}`, headers: h, payload: body as object });
  return { search: post(''), hybrid: post('/hybrid'), batch: post('/batch') };
}

export interface G3ErrorBody {
  code: string;
  message: string;
  details: { field: string; message: string }[];
  request_id: string;
}

/** Asserts the G3 error envelope, its status and code; returns the error object. */
export function expectG3Error(res: LightMyRequestResponse, status: number, code: string): G3ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['error']);
  const error = body.error as G3ErrorBody;
  expect(Object.keys(error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe('string');
  expect(Array.isArray(error.details)).toBe(true);
  expect(error.request_id).toMatch(/\S/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return error;
}

export const fieldsOf = (e: { details: { field: string }[] }): string[] => e.details.map((d) => d.field).sort();

export const ids = (matches: { id: string }[]): string[] => matches.map((m) => m.id);
