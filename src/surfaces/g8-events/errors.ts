import type { Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import { wireFields, type WireFieldProblem } from '../http-kit/wire-fields.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';

/**
 * The G8 error envelope, for everything refused before a stream opens: `{success: false, error: {code, message,
 * details: [{field, message}], request_id}}`. Once the stream is open, errors are `event: error` frames instead.
 */
interface G8Error { status: number; code: string; message: string; details: WireFieldProblem[] }

/** A refusal raised by G8 code itself (e.g. 406 when the client does not accept text/event-stream). */
export class G8HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: WireFieldProblem[] = []) {
    super(message);
    this.name = 'G8HttpError';
  }
}

/** Every domain error as G8 answers it before its stream opens (docs/api.md renders this table). */
export const G8_ERRORS = errorTable<G8Error>({
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE' },
});

const withFields = (b: WireBase, e: DomainError): G8Error => ({ ...b, details: wireFields(e.details.fields) });

function fromRequestProblem(p: RequestProblem): G8Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: wireFields(p.fields) };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: [] };
  }
}

/** Renders every error under `/api/v1/stream`, route errors and framework errors alike. */
export function createG8ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G8Error>({
    fromOwn: (error) => (error instanceof G8HttpError
      ? { status: error.status, code: error.code, message: error.message, details: error.details }
      : null),
    fromDomain: (e, req) => fromErrorTable(G8_ERRORS, e, req, withFields),
    fromRequestProblem,
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] },
    send: (e, req, reply) => {
      if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
      reply.header('X-Request-Id', req.id);
      return reply.status(e.status).send({
        success: false,
        error: { code: e.code, message: e.message, details: e.details, request_id: req.id },
      });
    },
  });
}
