import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { isDomainError, type DomainError } from '../../core/errors.ts';
import { MAX_BATCH_OPERATIONS } from '../../core/batch/batch.types.ts';
import { retryAfterSeconds, setRateLimitHeaders } from '../http-kit/auth.ts';
import { classifyRequestError } from '../http-kit/request-problems.ts';

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
    default: return { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} };
  }
}

/**
 * The G6 error envelope `{success: false, error: {code, message, details, request_id}}`, details an object:
 * INVALID_BATCH_REQUEST 400 ({field, reason}), BATCH_TOO_LARGE 413 ({max_operations, provided_operations} or
 * {max_bytes}), UNAUTHORIZED 401, PERMISSION_DENIED 403, UNSUPPORTED_MEDIA_TYPE 415, RATE_LIMITED 429.
 */
export function createG6ErrorHandler(_clock: Clock) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    let e: G6Error;
    if (error instanceof BatchRequestError) e = { status: error.status, code: error.code, message: error.message, details: error.details };
    else if (isDomainError(error)) {
      e = fromDomain(error);
      if (error.details.limit) {
        reply.header('Retry-After', retryAfterSeconds(error.details.limit.retryAfterMs));
        setRateLimitHeaders(reply, error.details.limit);
      }
    } else {
      const p = classifyRequestError(error);
      switch (p?.kind) {
        case 'payload_too_large': e = { status: 413, code: 'BATCH_TOO_LARGE', message: `A batch body may be at most ${MAX_BATCH_BYTES} bytes`, details: { max_bytes: MAX_BATCH_BYTES, max_operations: MAX_BATCH_OPERATIONS } }; break;
        case 'unsupported_media_type': e = { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: { field: 'Content-Type', reason: 'unsupported_media_type' } }; break;
        case 'malformed_json': e = { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: 'body', reason: 'invalid_json' } }; break;
        case 'validation': e = { status: 400, code: 'INVALID_BATCH_REQUEST', message: p.message, details: { field: p.fields[0]?.field ?? 'body', reason: 'invalid_value', fields: p.fields } }; break;
        case 'not_found': e = { status: 404, code: 'NOT_FOUND', message: p.message, details: {} }; break;
        default:
          req.log.error({ err: error }, 'unhandled error');
          e = { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} };
      }
    }
    return reply.status(e.status).send({ success: false, error: { code: e.code, message: e.message, details: e.details, request_id: req.id } });
  };
}
