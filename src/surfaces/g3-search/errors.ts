import type { Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import { wireFields, type WireFieldProblem } from '../http-kit/wire-fields.ts';

/**
 * The G3 error envelope: `{error: {code, message, details: [{field, message}], request_id}}` (no `success`, no
 * timestamp). Bad input is never a 500.
 */
export interface G3Error { status: number; code: string; message: string; details: WireFieldProblem[] }

/** Every domain error as G3 answers it (docs/api.md renders this table). */
export const G3_ERRORS = errorTable<G3Error>({
  TIMEOUT: { status: 408, code: 'SEARCH_TIMEOUT' },
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; try again later' },
});

const withFields = (b: WireBase, e: DomainError): G3Error => ({ ...b, details: wireFields(e.details.fields) });

function fromRequestProblem(p: RequestProblem): G3Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: wireFields(p.fields) };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: [] };
  }
}

/** Renders every error under `/api/v1/search` (route, hook, framework and unknown-path errors alike). */
export function createG3ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G3Error>({
    fromDomain: (e, req) => fromErrorTable(G3_ERRORS, e, req, withFields),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] },
    send: (e, req, reply) => reply.status(e.status).send({ error: { code: e.code, message: e.message, details: e.details, request_id: req.id } }),
  });
}
