import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError, FieldProblem } from '../../core/errors.ts';
import { retryAfterSeconds } from '../http-kit/auth.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import type { WireFieldProblem } from '../http-kit/wire-fields.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';

/**
 * The G2 flat error envelope: `{error: CODE, message, details, request_id}`, plus a top-level `retry_after`
 * (integer seconds, also sent as `Retry-After`) on RATE_LIMITED. `details` is always an object; for
 * INVALID_REQUEST it holds `missing_fields` (names) and `invalid_fields` ([{field, message}]), both always present.
 * Bad input is never a 500.
 */
interface G2Error { status: number; code: string; message: string; details: Record<string, unknown>; retryAfter?: number }

/**
 * Field names as the request gave them: the spec's `text` and `metadata.*`, or the client's `content`, `title`,
 * `memory_type`, `tags` (the routes check every field before the core sees it, naming it as sent).
 */
const wireField = (field: string): string => field;

const MESSAGE_PROBLEMS = 5;

/** 400 INVALID_REQUEST: missing fields apart, every other problem with its message. */
export function invalidRequest(fields: readonly FieldProblem[], fallback = 'Invalid request'): G2Error {
  const missing: string[] = [];
  const invalid: WireFieldProblem[] = [];
  for (const p of fields) {
    const field = wireField(p.field);
    if (p.reason === 'required') {
      if (!missing.includes(field)) missing.push(field);
    } else if (!invalid.some((q) => q.field === field)) {
      invalid.push({ field, message: p.message });
    }
  }
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing required field${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  const shown = invalid.slice(0, MESSAGE_PROBLEMS).map((p) => `${p.field} ${p.message}`);
  if (invalid.length > MESSAGE_PROBLEMS) shown.push(`and ${invalid.length - MESSAGE_PROBLEMS} more`);
  parts.push(...shown);
  const message = parts.length > 0 ? `Invalid request: ${parts.join('; ')}` : fallback;
  return { status: 400, code: 'INVALID_REQUEST', message, details: { missing_fields: missing, invalid_fields: invalid } };
}

const noDetails = (b: WireBase): G2Error => ({ ...b, details: {} });
const EMBEDDING_UNAVAILABLE = 'The embedding model is unavailable; nothing was written. Try again later';
const conflict = (b: WireBase, e: DomainError): G2Error => ({ ...b, details: { field: wireField(e.details.fields?.[0]?.field ?? 'id') } });

function rateLimited(b: WireBase, e: DomainError): G2Error {
  const limit = e.details.limit;
  if (!limit) return { ...b, details: {}, retryAfter: 60 };
  return {
    ...b,
    details: {
      limit: limit.limit, remaining: limit.remaining, reset_at: isoTimestamp(limit.resetAt),
      limit_type: limit.bucket === 'memory-writes' ? 'memory_writes_per_hour' : 'requests_per_minute',
    },
    retryAfter: retryAfterSeconds(limit.retryAfterMs),
  };
}

/** Every domain error as G2 answers it (docs/api.md renders this table). */
export const G2_ERRORS = errorTable<G2Error>({
  VALIDATION_FAILED: { status: 400, code: 'INVALID_REQUEST', build: (_b, e) => invalidRequest(e.details.fields ?? [], e.message) },
  PERMISSION_DENIED: { status: 403, code: 'PERMISSION_DENIED', build: (b, e) => ({ ...b, details: { required_scope: e.details.requiredScope } }) },
  // Never echoes the id: another tenant's memory answers exactly like a missing one.
  NOT_FOUND: { status: 404, code: 'NOT_FOUND', message: 'Memory not found' },
  AMBIGUOUS_ID: { status: 409, code: 'CONFLICT', build: conflict },
  CONFLICT: { status: 409, code: 'CONFLICT', build: conflict },
  CONTENT_TOO_LARGE: {
    status: 413, code: 'PAYLOAD_TOO_LARGE',
    build: (b, e) => ({
      ...b, message: b.message.replace(/^content/, 'text'),
      details: { field: 'text', ...(typeof e.details.maxBytes === 'number' ? { max_bytes: e.details.maxBytes } : {}) },
    }),
  },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: EMBEDDING_UNAVAILABLE },
  TIMEOUT: { status: 503, code: 'SERVICE_UNAVAILABLE', message: EMBEDDING_UNAVAILABLE },
});

function fromRequestProblem(p: RequestProblem): G2Error {
  switch (p.kind) {
    case 'validation': return invalidRequest(p.fields, p.message);
    case 'malformed_json':
      return invalidRequest([{ field: 'body', reason: 'invalid_format', message: p.empty ? 'is empty; a JSON object is required' : 'is not valid JSON' }]);
    case 'unsupported_media_type':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json', details: { field: 'Content-Type' } };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: { field: 'body' } };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: {} };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: {} };
  }
}

/** Renders every error under `/api/v1/memory`: route, hook, framework and unknown-path errors alike. */
export function createG2ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G2Error>({
    fromDomain: (e, req) => fromErrorTable(G2_ERRORS, e, req, noDetails),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} },
    send: (e, req, reply) => {
      if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
      return reply.status(e.status).send({
        error: e.code,
        message: e.message,
        details: e.details,
        ...(e.retryAfter !== undefined ? { retry_after: e.retryAfter } : {}),
        request_id: req.id,
      });
    },
  });
}
