import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { RateLimiter } from '../../src/core/rate-limit/rate-limiter.port.ts';
import type { Json } from '../support/test-app.ts';

export const G5_URL = '/api/v1/embeddings';

/** A G5 client bound to one key (sent as `Authorization: Bearer`; none when undefined). */
export function g5(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const base = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  return {
    /** A JSON body (inject sets `Content-Type: application/json`). */
    embed: (body: unknown, extra: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: G5_URL, headers: { ...base, ...extra }, payload: body as object }),
    /** A raw body with exactly the given content type (none when undefined). */
    raw: (payload: string | undefined, contentType: string | undefined, extra: Record<string, string> = {}) =>
      app.inject({
        method: 'POST', url: G5_URL, ...(payload === undefined ? {} : { payload }),
        headers: { ...base, ...(contentType === undefined ? {} : { 'content-type': contentType }), ...extra },
      }),
  };
}

export interface G5ErrorBody {
  code: string;
  message: string;
  details: Json;
  request_id: string;
  timestamp: string;
}

/** Asserts the G5 error envelope, its status and code; returns the error object. */
export function expectG5Error(res: LightMyRequestResponse, status: number, code: string): G5ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as { success: boolean; error: G5ErrorBody };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toMatch(/\S/);
  expect(typeof body.error.details).toBe('object');
  expect(Array.isArray(body.error.details)).toBe(false);
  expect(body.error.details.reason).toMatch(/^[a-z_]+$/);
  expect(body.error.request_id).toMatch(/\S/);
  expect(body.error.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return body.error;
}

/** The in-memory limiter, counting the hits of each bucket kind (`gateway`, `embeddings`, ...). */
export function countingLimiter(clock: Clock): RateLimiter & { hits: Map<string, number> } {
  const inner = createMemoryRateLimiter(clock);
  const hits = new Map<string, number>();
  return {
    hits,
    hit(bucket, limit, windowMs) {
      const kind = bucket.split(':')[0]!;
      hits.set(kind, (hits.get(kind) ?? 0) + 1);
      return inner.hit(bucket, limit, windowMs);
    },
  };
}
