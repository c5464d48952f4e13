import type { Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { MAX_BATCH_OPERATIONS } from '../../core/batch/batch.types.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
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

function fromDomain(e: DomainError): G6Error {
  const fields = e.details.fields ?? [];
  const limit = e.details.limit;
  switch (e.code) {
    case 'UNAUTHENTICATED': return { status: 401, code: 'UNAUTHORIZED', message: e.message, details: { reason: 'invalid_api_key' } };
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details: { required_scope: e.details.requiredScope } };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED':
      return { status: 429, code: 'RATE_LIMITED', message: e.message, details: limit ? { limit: limit.limit, remaining: limit.remaining, reset_at: limit.resetAt.toISOString() } : {} };
    case 'VALIDATION_FAILED': return { status: 400, code: 'INVALID_BATCH_REQUEST', message: e.message, details: { fields } };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details: { reason: 'overloaded' } };
    default: return { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} };
  }
}

function fromRequestProblem(p: RequestProblem): G6Error {
  switch (p.kind) {
    case 'payload_too_large': return { status: 413, code: 'BATCH_TOO_LARGE', message: `A batch body may be at most ${MAX_BATCH_BYTES} bytes`, details: { max_bytes: MAX_BATCH_BYTES, max_operations: MAX_BATCH_OPERATIONS } };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: { field: 'Content-Type', reason: 'unsupported_media_type' } };
    case 'malformed_json': return { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: 'body', reason: 'invalid_json' } };
    case 'validation': return { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: p.fields[0]?.field ?? 'body', reason: 'invalid_value', fields: p.fields } };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: {} };
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
    fromDomain: (e) => fromDomain(e),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} },
    send: (e, req, reply) => reply.status(e.status).send({ success: false, error: { code: e.code, message: e.message, details: e.details, request_id: req.id } }),
  });
}
