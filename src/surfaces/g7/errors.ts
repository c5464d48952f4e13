import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';

/**
 * The G7 error envelope: `{success: false, error: {code, message, details}, metadata: {generated_at, request_id}}`
 * (G7 answers carry `metadata` where other surfaces have `meta`). `details` is an object, as in the spec's
 * `details {field, valid_values}` and `details.reason`.
 */
/** The envelope as a response schema, for OpenAPI. */
export const G7ErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Object({}, { additionalProperties: true }) }),
  metadata: Type.Object({ generated_at: Type.String(), request_id: Type.String() }),
});

interface G7Error { status: number; code: string; message: string; details: Record<string, unknown> }

/** A refusal raised by G7 code itself. */
export class G7HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'G7HttpError';
  }
}

function fromDomain(e: DomainError): G7Error {
  const fields = e.details.fields ?? [];
  switch (e.code) {
    case 'VALIDATION_FAILED': return { status: 400, code: 'VALIDATION_ERROR', message: e.message, details: { fields } };
    case 'UNAUTHENTICATED': return { status: 401, code: 'UNAUTHORIZED', message: e.message, details: { reason: 'invalid_api_key' } };
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details: {} };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED': return { status: 429, code: 'RATE_LIMITED', message: e.message, details: {} };
    case 'NOT_FOUND': return { status: 404, code: 'NOT_FOUND', message: e.message, details: {} };
    case 'TIMEOUT': return { status: 504, code: 'TIMEOUT', message: e.message, details: {} };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details: {} };
    default: return { status: 400, code: 'BAD_REQUEST', message: e.message, details: {} };
  }
}

function fromRequestProblem(p: RequestProblem): G7Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: { fields: p.fields } };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: {} };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: {} };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: {} };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: {} };
  }
}

/** Renders every error under `/api/v1/analytics`. */
export function createG7ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<G7Error>({
    fromOwn: (error) => (error instanceof G7HttpError
      ? { status: error.status, code: error.code, message: error.message, details: error.details }
      : null),
    fromDomain,
    fromRequestProblem,
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} },
    send: (e, req, reply) => {
      if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
      reply.header('X-Request-Id', req.id);
      return reply.status(e.status).send({
        success: false,
        error: { code: e.code, message: e.message, details: e.details },
        metadata: { generated_at: isoTimestamp(clock.now()), request_id: req.id },
      });
    },
  });
}
