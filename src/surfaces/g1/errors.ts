import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError, FieldProblem } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';

/**
 * The G1 error envelope: `{success: false, error: {code, message, details: [{field, message}], request_id,
 * timestamp}}`. An ambiguous id prefix is 409 AMBIGUOUS_ID; its details name only ids in the caller's scope.
 */
interface G1Error { status: number; code: string; message: string; details: FieldProblem[] }

function fromDomain(e: DomainError): G1Error {
  const details = e.details.fields ?? [];
  switch (e.code) {
    case 'VALIDATION_FAILED': return { status: 400, code: 'VALIDATION_ERROR', message: e.message, details };
    case 'UNAUTHENTICATED': return { status: 401, code: 'UNAUTHORIZED', message: e.message, details };
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details };
    case 'NOT_FOUND': return e.details.resource === 'topic'
      ? { status: 404, code: 'TOPIC_NOT_FOUND', message: e.message, details }
      : { status: 404, code: 'MEMORY_NOT_FOUND', message: e.message, details };
    case 'AMBIGUOUS_ID': {
      const candidates = (e.details.candidates as string[] | undefined) ?? [];
      return {
        status: 409, code: 'AMBIGUOUS_ID', message: e.message,
        details: [{ field: 'id', message: `matches ${candidates.length > 9 ? 'at least ' : ''}${candidates.length} memories: ${candidates.join(', ')}` }],
      };
    }
    case 'CONTENT_TOO_LARGE': return { status: 413, code: 'CONTENT_TOO_LARGE', message: e.message, details };
    case 'RATE_LIMITED': return { status: 429, code: 'RATE_LIMITED', message: e.message, details };
    case 'QUOTA_EXCEEDED': return { status: 429, code: 'QUOTA_EXCEEDED', message: e.message, details };
    case 'EMBEDDING_FAILED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; nothing was written', details };
    case 'CONFLICT': return { status: 409, code: 'CONFLICT', message: e.message, details };
    case 'TIMEOUT': return { status: 408, code: 'SEARCH_TIMEOUT', message: e.message, details };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details };
  }
}

function fromRequestProblem(p: RequestProblem): G1Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: p.fields };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'CONTENT_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
  }
}

export function createG1ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<G1Error>({
    fromDomain,
    fromRequestProblem,
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] },
    send: (e, req, reply) => reply.status(e.status).send({
      success: false,
      error: { code: e.code, message: e.message, details: e.details, request_id: req.id, timestamp: isoTimestamp(clock.now()) },
    }),
  });
}
