import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import { wireFields, type WireFieldProblem } from '../http-kit/wire-fields.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';

/**
 * The G1 error envelope: `{success: false, error: {code, message, details: [{field, message}], request_id,
 * timestamp}}`. An ambiguous id prefix is 409 AMBIGUOUS_ID; its details name only ids in the caller's scope.
 */
interface G1Error { status: number; code: string; message: string; details: WireFieldProblem[] }

/** The code of a missing resource other than a memory (by the error's `resource`). */
const NOT_FOUND_CODES: Readonly<Record<string, string>> = { topic: 'TOPIC_NOT_FOUND', ingestion: 'INGESTION_NOT_FOUND' };

/** Every domain error as G1 answers it (docs/api.md renders this table). */
export const G1_ERRORS = errorTable<G1Error>({
  NOT_FOUND: {
    status: 404, code: 'MEMORY_NOT_FOUND', variants: ['TOPIC_NOT_FOUND', 'INGESTION_NOT_FOUND'],
    build: (b, e) => {
      const resource = String(e.details.resource);
      return { ...b, code: Object.hasOwn(NOT_FOUND_CODES, resource) ? NOT_FOUND_CODES[resource]! : b.code, details: wireFields(e.details.fields) };
    },
  },
  AMBIGUOUS_ID: {
    status: 409, code: 'AMBIGUOUS_ID',
    build: (b, e) => {
      const candidates = (e.details.candidates as string[] | undefined) ?? [];
      return { ...b, details: [{ field: 'id', message: `matches ${candidates.length > 9 ? 'at least ' : ''}${candidates.length} memories: ${candidates.join(', ')}` }] };
    },
  },
  CONTENT_TOO_LARGE: { status: 413, code: 'CONTENT_TOO_LARGE' },
  QUOTA_EXCEEDED: { status: 429, code: 'QUOTA_EXCEEDED' },
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; nothing was written' },
  TIMEOUT: { status: 408, code: 'SEARCH_TIMEOUT' },
});

const withFields = (b: WireBase, e: DomainError): G1Error => ({ ...b, details: wireFields(e.details.fields) });

function fromRequestProblem(p: RequestProblem): G1Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: wireFields(p.fields) };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'CONTENT_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: [] };
  }
}

export function createG1ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<G1Error>({
    fromDomain: (e, req) => fromErrorTable(G1_ERRORS, e, req, withFields),
    fromRequestProblem,
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] },
    send: (e, req, reply) => reply.status(e.status).send({
      success: false,
      error: { code: e.code, message: e.message, details: e.details, request_id: req.id, timestamp: isoTimestamp(clock.now()) },
    }),
  });
}
