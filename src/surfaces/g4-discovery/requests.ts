import type { FastifyRequest } from 'fastify';
import type { FieldProblem } from '../../core/errors.ts';
import { G4HttpError } from './errors.ts';

/** Fastify does not read bodies of GET requests; G4's `GET /v1/search` accepts `{metadata_filter}` in one. */
export const MAX_GET_BODY_BYTES = 64 * 1024;

export type GetBody = { ok: true; value: Record<string, unknown> | undefined } | { ok: false; problems: FieldProblem[] };

const bodies = new WeakMap<FastifyRequest, GetBody>();

const isJsonType = (ct: string | undefined): boolean => {
  const type = ct?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json' || (type !== undefined && /^application\/[\w.+-]+\+json$/.test(type));
};

/**
 * A preValidation hook: reads the raw body of a GET (at most 64 KiB) when there is one. A non-JSON content type
 * is 415 and an oversized body 413 at once; bad JSON is kept as a problem on `body`, reported with the others.
 */
export async function readGetBody(req: FastifyRequest): Promise<void> {
  const headers = req.raw.headers;
  const length = headers['content-length'];
  const hasBody = headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!hasBody) return;
  if (!isJsonType(headers['content-type'])) {
    throw new G4HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'A body sent with GET must be application/json',
      [{ field: 'Content-Type', message: 'must be application/json' }]);
  }
  const tooLarge = () => new G4HttpError(413, 'PAYLOAD_TOO_LARGE', `A body sent with GET may be at most ${MAX_GET_BODY_BYTES} bytes`,
    [{ field: 'body', message: `at most ${MAX_GET_BODY_BYTES} bytes` }]);
  if (length !== undefined && Number(length) > MAX_GET_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > MAX_GET_BODY_BYTES) throw tooLarge();
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    bodies.set(req, { ok: false, problems: [{ field: 'body', reason: 'invalid_format', message: 'is not valid JSON' }] });
    return;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    bodies.set(req, { ok: false, problems: [{ field: 'body', reason: 'invalid_type', message: 'must be a JSON object such as {"metadata_filter": {...}}' }] });
    return;
  }
  bodies.set(req, { ok: true, value: parsed as Record<string, unknown> });
}

/** What readGetBody found: nothing, an object, or problems. */
export const getBodyOf = (req: FastifyRequest): GetBody => bodies.get(req) ?? { ok: true, value: undefined };
