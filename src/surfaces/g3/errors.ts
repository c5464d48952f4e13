import type { Clock } from '../../core/clock.ts';
import type { DomainError, FieldProblem } from '../../core/errors.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';

/**
 * The G3 error envelope: `{error: {code, message, details: [{field, message}], request_id}}` (no `success`, no
 * timestamp). Bad input is never a 500.
 */
export interface G3Error { status: number; code: string; message: string; details: FieldProblem[] }

export function fromDomain(e: DomainError): G3Error {
  const details = e.details.fields ?? [];
  switch (e.code) {
    case 'VALIDATION_FAILED': return { status: 400, code: 'VALIDATION_ERROR', message: e.message, details };
    case 'UNAUTHENTICATED': return { status: 401, code: 'UNAUTHORIZED', message: e.message, details };
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details };
    case 'NOT_FOUND': return { status: 404, code: 'NOT_FOUND', message: e.message, details };
    // Neither arises from a search; mapped for completeness.
    case 'AMBIGUOUS_ID':
    case 'CONFLICT': return { status: 409, code: 'CONFLICT', message: e.message, details };
    case 'CONTENT_TOO_LARGE': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: e.message, details };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED': return { status: 429, code: 'RATE_LIMITED', message: e.message, details };
    case 'TIMEOUT': return { status: 408, code: 'SEARCH_TIMEOUT', message: e.message, details };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details };
    case 'EMBEDDING_FAILED':
      return { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; try again later', details };
  }
}

function fromRequestProblem(p: RequestProblem): G3Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: p.fields };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
  }
}

/** Renders every error under `/api/v1/search` (route, hook, framework and unknown-path errors alike). */
export function createG3ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G3Error>({
    fromDomain: (e) => fromDomain(e),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] },
    send: (e, req, reply) => reply.status(e.status).send({ error: { code: e.code, message: e.message, details: e.details, request_id: req.id } }),
  });
}
