import { Type } from 'typebox';
import type { DomainError, FieldProblem } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from './error-handler.ts';
import type { RequestProblem } from './request-problems.ts';

/**
 * The error envelope G9 and G10 share (the spec shows none for either): `{success: false, error: {code, message,
 * details: [{field, message}], request_id}}`. VALIDATION_ERROR 400, UNAUTHORIZED 401, PERMISSION_DENIED 403,
 * WEBHOOK_NOT_FOUND 404, NOT_FOUND 404 (unknown path), CONFLICT 409, PAYLOAD_TOO_LARGE 413,
 * UNSUPPORTED_MEDIA_TYPE 415, RATE_LIMITED 429 (with Retry-After). The two differ only in their credential header.
 */
interface WebhookError { status: number; code: string; message: string; details: FieldProblem[] }

/** The envelope as a response schema, for OpenAPI. */
export const WebhookErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    request_id: Type.String(),
  }),
});

const INTERNAL: WebhookError = { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] };

function fromDomain(e: DomainError): WebhookError {
  const details = e.details.fields ?? [];
  switch (e.code) {
    case 'VALIDATION_FAILED': return { status: 400, code: 'VALIDATION_ERROR', message: e.message, details };
    case 'UNAUTHENTICATED': return { status: 401, code: 'UNAUTHORIZED', message: e.message, details };
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details };
    case 'NOT_FOUND':
      return e.details.resource === 'webhook'
        ? { status: 404, code: 'WEBHOOK_NOT_FOUND', message: e.message, details }
        : { status: 404, code: 'NOT_FOUND', message: e.message, details };
    case 'CONTENT_TOO_LARGE': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: e.message, details };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED': return { status: 429, code: 'RATE_LIMITED', message: e.message, details };
    case 'CONFLICT': return { status: 409, code: 'CONFLICT', message: e.message, details };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details };
    default: return INTERNAL;
  }
}

function fromRequestProblem(p: RequestProblem): WebhookError {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: p.fields };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
  }
}

export function createWebhookSurfaceErrorHandler() {
  return createSurfaceErrorHandler<WebhookError>({
    fromDomain: (e) => fromDomain(e),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: INTERNAL,
    send: (e, req, reply) => reply.status(e.status).send({
      success: false,
      error: { code: e.code, message: e.message, details: e.details, request_id: req.id },
    }),
  });
}
