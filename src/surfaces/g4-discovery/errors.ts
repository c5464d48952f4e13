import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import { isDomainError, type DomainError, type FieldProblem } from '../../core/errors.ts';
import { setRetryHeaders } from '../http-kit/error-handler.ts';
import { classifyRequestError, type RequestProblem } from '../http-kit/request-problems.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import { wireFields, type WireFieldProblem } from '../http-kit/wire-fields.ts';

/**
 * The G4 error envelope: `{success: false, error: {code, message, details: [{field, message}]}, meta: {timestamp,
 * request_id}}`. A 400 lists every problem of the request; its code is chosen by the most important one:
 * INVALID_QUERY > INVALID_VECTOR > SIMILARITY_THRESHOLD_INVALID > VALIDATION_ERROR.
 */
interface G4Error { status: number; code: string; message: string; details: WireFieldProblem[] }

/** An HTTP-level refusal raised by G4 code itself (e.g. while reading a GET body). */
export class G4HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: WireFieldProblem[] = []) {
    super(message);
    this.name = 'G4HttpError';
  }
}

const QUERY_FIELDS = new Set(['q', 'text', 'query']);
const isVectorField = (f: string) => f === 'vector' || f.startsWith('vector[');

/** 0 query, 1 vector, 2 threshold, 3 anything else: the priority of a problem's code. */
const rankOf = (field: string): number =>
  QUERY_FIELDS.has(field) ? 0 : isVectorField(field) ? 1 : field === 'similarity_threshold' ? 2 : 3;

const CODES = [
  { code: 'INVALID_QUERY', message: 'Invalid query' },
  { code: 'INVALID_VECTOR', message: 'Invalid vector' },
  { code: 'SIMILARITY_THRESHOLD_INVALID', message: 'Invalid similarity_threshold' },
  { code: 'VALIDATION_ERROR', message: 'Request validation failed' },
] as const;

/** The 400 code of a set of problems, by priority. */
export const validationCodeOf = (details: readonly WireFieldProblem[]) => CODES[Math.min(3, ...details.map((d) => rankOf(d.field)))]!;

/** At most this many per-entry vector problems are listed; the rest are summed up in one more entry. */
const MAX_VECTOR_ENTRY_PROBLEMS = 10;

function compactVectorProblems(details: WireFieldProblem[]): WireFieldProblem[] {
  const entries = details.filter((d) => d.field.startsWith('vector['));
  if (entries.length <= MAX_VECTOR_ENTRY_PROBLEMS) return details;
  const kept = new Set(entries.slice(0, MAX_VECTOR_ENTRY_PROBLEMS));
  const out = details.filter((d) => !d.field.startsWith('vector[') || kept.has(d));
  out.push({ field: 'vector', message: `${entries.length - MAX_VECTOR_ENTRY_PROBLEMS} more entries are not finite numbers either` });
  return out;
}

/** The code by priority; the message names the first problem of that kind (e.g. the available models). */
function badRequest(details: readonly FieldProblem[], message: string = CODES[3].message): G4Error {
  // Most important first; the order within a kind is kept.
  const list = compactVectorProblems(wireFields(details)).map((d, i) => ({ d, i }))
    .sort((a, b) => rankOf(a.d.field) - rankOf(b.d.field) || a.i - b.i).map(({ d }) => d);
  const chosen = validationCodeOf(list);
  const base = chosen.code === 'VALIDATION_ERROR' ? message : chosen.message;
  const first = list[0];
  return { status: 400, code: chosen.code, message: first ? `${base}: ${first.field} ${first.message}` : base, details: list };
}

/** Every domain error as G4 answers it (docs/api.md renders this table). */
export const G4_ERRORS = errorTable<G4Error>({
  VALIDATION_FAILED: {
    status: 400, code: 'VALIDATION_ERROR', variants: ['INVALID_QUERY', 'INVALID_VECTOR', 'SIMILARITY_THRESHOLD_INVALID'],
    build: (_b, e) => badRequest(e.details.fields ?? [], e.message),
  },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMIT_EXCEEDED' },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMIT_EXCEEDED' },
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable' },
  TIMEOUT: { status: 408, code: 'SEARCH_TIMEOUT' },
});

const withFields = (b: WireBase, e: DomainError): G4Error => ({ ...b, details: wireFields(e.details.fields) });

function fromRequestProblem(p: RequestProblem): G4Error {
  switch (p.kind) {
    case 'validation': return badRequest(p.fields);
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: [{ field: 'body', message: p.message }] };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: p.message, details: [{ field: 'Content-Type', message: 'must be application/json' }] };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: [] };
    case 'not_found': return { status: 404, code: 'NOT_FOUND', message: p.message, details: [] };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: [] };
  }
}

/** Renders every error under `/v1/search` and `/v1/embeddings`, route errors and framework errors alike. */
export function createG4ErrorHandler(clock: Clock) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    let e: G4Error;
    if (error instanceof G4HttpError) {
      e = { status: error.status, code: error.code, message: error.message, details: error.details };
    } else if (isDomainError(error)) {
      e = fromErrorTable(G4_ERRORS, error, req, withFields);
      setRetryHeaders(reply, error);
    } else {
      const problem = classifyRequestError(error);
      if (problem) e = fromRequestProblem(problem);
      else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        // Some other refusal of the request by the framework: still the client's, never a 500.
        e = { status: error.statusCode, code: 'VALIDATION_ERROR', message: error.message, details: [] };
      } else {
        req.log.error({ err: error }, 'unhandled error');
        e = { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: [] };
      }
    }
    if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
    // Framework errors (e.g. a bad URL) skip the server's onSend hook; the header must still match meta.request_id.
    reply.header('X-Request-Id', req.id);
    return reply.status(e.status).send({
      success: false,
      error: { code: e.code, message: e.message, details: e.details },
      meta: { timestamp: isoTimestamp(clock.now()), request_id: req.id },
    });
  };
}
