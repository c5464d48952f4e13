import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable } from '../http-kit/error-table.ts';
import { wireFields } from '../http-kit/wire-fields.ts';
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

/**
 * Every domain error as G7 answers it (docs/api.md renders this table). AMBIGUOUS_ID, CONTENT_TOO_LARGE,
 * EMBEDDING_FAILED and CONFLICT, which analytics never raises, take the shared rows (they were 400 BAD_REQUEST).
 */
export const G7_ERRORS = errorTable<G7Error>({
  VALIDATION_FAILED: { status: 400, code: 'VALIDATION_ERROR', build: (b, e) => ({ ...b, details: { fields: wireFields(e.details.fields) } }) },
  UNAUTHENTICATED: { status: 401, code: 'UNAUTHORIZED', build: (b) => ({ ...b, details: { reason: 'invalid_api_key' } }) },
});

function fromRequestProblem(p: RequestProblem): G7Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: { fields: wireFields(p.fields) } };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: {} };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: {} };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: {} };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: {} };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: {} };
  }
}

/** Renders every error under `/api/v1/analytics`. */
export function createG7ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<G7Error>({
    fromOwn: (error) => (error instanceof G7HttpError
      ? { status: error.status, code: error.code, message: error.message, details: error.details }
      : null),
    fromDomain: (e, req) => fromErrorTable(G7_ERRORS, e, req, (b) => ({ ...b, details: {} })),
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
