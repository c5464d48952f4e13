import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { Json } from '../support/test-app.ts';

export const G2_URL = '/api/v1/memory';
export const DIMS = 1536;
/** The test app's embedder: the hashing one at 256 dimensions. */
export const NATIVE_DIMS = 256;

/** A G2 client bound to one key (sent as `Authorization: Bearer`; none when undefined). */
export function g2(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers };
  const at = (id: string) => `${G2_URL}/${encodeURIComponent(id)}`;
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: G2_URL, headers: h, payload: body as object }),
    get: (id: string) => app.inject({ method: 'GET', url: at(id), headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PUT', url: at(id), headers: h, payload: body as object }),
    delete: (id: string) => app.inject({ method: 'DELETE', url: at(id), headers: h }),
    /** A raw body with exactly the given content type (none when undefined). */
    raw: (method: 'POST' | 'PUT', url: string, payload: string, contentType: string | undefined) => app.inject({
      method, url, payload, headers: { ...h, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    }),
  };
}

export interface G2ErrorBody {
  error: string;
  message: string;
  details: Json;
  retry_after?: number;
  request_id: string;
}

/** Asserts the G2 flat error envelope, its status and code; returns the body. */
export function expectG2Error(res: LightMyRequestResponse, status: number, code: string): G2ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as G2ErrorBody;
  expect(body.error).toBe(code);
  expect(body.message).toMatch(/\S/);
  expect(typeof body.details).toBe('object');
  expect(Array.isArray(body.details)).toBe(false);
  expect(body.request_id).toMatch(/\S/);
  if (code === 'INVALID_REQUEST') {
    expect(Array.isArray(body.details.missing_fields)).toBe(true);
    expect(Array.isArray(body.details.invalid_fields)).toBe(true);
  }
  return body;
}

/** The fields named in an INVALID_REQUEST's invalid_fields, sorted. */
export const invalidFields = (body: G2ErrorBody): string[] =>
  (body.details.invalid_fields as { field: string }[]).map((p) => p.field).sort();

/** The hashing embedder's vector of `text`, padded to the API width with zeros. */
export function paddedHashVector(text: string): number[] {
  const native = Array.from(hashEmbed(text, NATIVE_DIMS));
  return [...native, ...new Array<number>(DIMS - NATIVE_DIMS).fill(0)];
}

/** What the core embeds for a memory: title, a blank line, content (short texts: no cut). */
export const embeddingTextOf = (title: string, content: string): string => `${title}\n\n${content}`;

/** A vector of 1536 numbers with a non-zero tail, each exactly representable as a short decimal. */
export function clientVector(seed = 1): number[] {
  return Array.from({ length: DIMS }, (_, i) => Math.round(Math.sin(i * 0.37 + seed) * 10_000) / 10_000);
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const uuidOf = (legacyId: string): string => legacyId.replace(/^mem_/, '');

/**
 * The spec's fields of a G2 answer (G2 answers add the fields @lanonasis/memory-client reads beside them; see
 * test/client/memory-client.test.ts): tests of the spec's shape compare exactly these.
 */
export const SPEC_FIELDS = {
  created: ['id', 'status', 'embedding_generated', 'vector_dimensions', 'tokens_used'],
  memory: ['id', 'text', 'metadata', 'embedding', 'created_at', 'updated_at'],
  updated: ['id', 'status', 'embedding_regenerated'],
} as const;
export const specPart = (body: Json, kind: keyof typeof SPEC_FIELDS): Json =>
  Object.fromEntries(SPEC_FIELDS[kind].filter((k) => k in body).map((k) => [k, body[k]]));
