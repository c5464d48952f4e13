import { Type } from 'typebox';
import type { DomainError } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from './error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from './error-table.ts';
import { wireFields, type WireFieldProblem } from './wire-fields.ts';
import type { RequestProblem } from './request-problems.ts';

/**
 * The error envelope G9 and G10 share (the spec shows none for either): `{success: false, error: {code, message,
 * details: [{field, message}], request_id}}`. VALIDATION_ERROR 400, UNAUTHORIZED 401, PERMISSION_DENIED 403,
 * WEBHOOK_NOT_FOUND 404, NOT_FOUND 404 (unknown path), CONFLICT 409, PAYLOAD_TOO_LARGE 413,
 * UNSUPPORTED_MEDIA_TYPE 415, RATE_LIMITED 429 (with Retry-After), SERVICE_UNAVAILABLE 503. The two differ only in their
 * credential header.
 */
interface WebhookError { status: number; code: string; message: string; details: WireFieldProblem[] }

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

/**
 * Every domain error as G9 and G10 answer it (docs/api.md renders this table). AMBIGUOUS_ID, EMBEDDING_FAILED and
 * TIMEOUT, which webhooks never raise, take the shared rows (they were a 500).
 */
export const WEBHOOK_ERRORS = errorTable<WebhookError>({
  NOT_FOUND: {
    status: 404, code: 'WEBHOOK_NOT_FOUND', variants: ['NOT_FOUND'],
    build: (b, e) => ({ ...b, code: e.details.resource === 'webhook' ? b.code : 'NOT_FOUND', details: wireFields(e.details.fields) }),
  },
});

const withFields = (b: WireBase, e: DomainError): WebhookError => ({ ...b, details: wireFields(e.details.fields) });

function fromRequestProblem(p: RequestProblem): WebhookError {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: wireFields(p.fields) };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: [] };
  }
}

export function createWebhookSurfaceErrorHandler() {
  return createSurfaceErrorHandler<WebhookError>({
    fromDomain: (e, req) => fromErrorTable(WEBHOOK_ERRORS, e, req, withFields),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: INTERNAL,
    send: (e, req, reply) => reply.status(e.status).send({
      success: false,
      error: { code: e.code, message: e.message, details: e.details, request_id: req.id },
    }),
  });
}
