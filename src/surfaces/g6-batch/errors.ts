import type { Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { MAX_BATCH_OPERATIONS } from '../../core/batch/batch.types.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import { wireFields } from '../http-kit/wire-fields.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';

/** Largest batch body (the spec's 10 MB). */
export const MAX_BATCH_BYTES = 10 * 1024 * 1024;

/** Request-level problems of G6 that are not DomainErrors. */
export class BatchRequestError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: Record<string, unknown>) {
    super(message);
  }
}

interface G6Error { status: number; code: string; message: string; details: Record<string, unknown> }

/**
 * Every domain error as G6 answers it for the request as a whole (docs/api.md renders this table; an operation's
 * own error is mapped by OPERATION_ERROR_CODES in mappers.ts). Codes G6's specification does not name take the
 * shared rows (they were a 500 before).
 */
export const G6_ERRORS = errorTable<G6Error>({
  UNAUTHENTICATED: { status: 401, code: 'UNAUTHORIZED', build: (b) => ({ ...b, details: { reason: 'invalid_api_key' } }) },
  PERMISSION_DENIED: { status: 403, code: 'PERMISSION_DENIED', build: (b, e) => ({ ...b, details: { required_scope: e.details.requiredScope } }) },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  VALIDATION_FAILED: { status: 400, code: 'INVALID_BATCH_REQUEST', build: (b, e) => ({ ...b, details: { fields: wireFields(e.details.fields) } }) },
  OVERLOADED: { status: 503, code: 'SERVICE_UNAVAILABLE', build: (b) => ({ ...b, details: { reason: 'overloaded' } }) },
});

function rateLimited(b: WireBase, e: DomainError): G6Error {
  const limit = e.details.limit;
  return { ...b, details: limit ? { limit: limit.limit, remaining: limit.remaining, reset_at: limit.resetAt.toISOString() } : {} };
}

function fromRequestProblem(p: RequestProblem): G6Error {
  switch (p.kind) {
    case 'payload_too_large': return { status: 413, code: 'BATCH_TOO_LARGE', message: `A batch body may be at most ${MAX_BATCH_BYTES} bytes`, details: { max_bytes: MAX_BATCH_BYTES, max_operations: MAX_BATCH_OPERATIONS } };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: { field: 'Content-Type', reason: 'unsupported_media_type' } };
    case 'malformed_json': return { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: 'body', reason: 'invalid_json' } };
    case 'validation': return { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: p.fields[0]?.field ?? 'body', reason: 'invalid_value', fields: wireFields(p.fields) } };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: {} };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: {} };
  }
}

/**
 * The G6 error envelope `{success: false, error: {code, message, details, request_id}}`, details an object:
 * INVALID_BATCH_REQUEST 400 ({field, reason}), BATCH_TOO_LARGE 413 ({max_operations, provided_operations} or
 * {max_bytes}), UNAUTHORIZED 401, PERMISSION_DENIED 403, UNSUPPORTED_MEDIA_TYPE 415, RATE_LIMITED 429.
 */
export function createG6ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G6Error>({
    fromOwn: (error) => (error instanceof BatchRequestError ? { status: error.status, code: error.code, message: error.message, details: error.details } : null),
    fromDomain: (e, req) => fromErrorTable(G6_ERRORS, e, req, (b) => ({ ...b, details: {} })),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} },
    send: (e, req, reply) => reply.status(e.status).send({ success: false, error: { code: e.code, message: e.message, details: e.details, request_id: req.id } }),
  });
}
