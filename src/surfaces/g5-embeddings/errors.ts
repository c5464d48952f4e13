import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError, FieldProblem, FieldReason } from '../../core/errors.ts';
import { readCredential } from '../http-kit/auth.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';

/**
 * The G5 error envelope: `{success: false, error: {code, message, details, request_id, timestamp}}` where
 * `details` is an object that always has a `reason`. A 400 names the first problem's `{field, reason, message}`
 * and, when there are several, lists every one in `details.errors`.
 */

export type G5Reason =
  | 'missing_required_field'
  | 'invalid_type'
  | 'empty_input'
  | 'too_many_inputs'
  | 'input_too_long'
  | 'unknown_model'
  | 'invalid_json'
  | 'invalid_value';

export interface G5Problem {
  field: string;
  reason: G5Reason;
  message: string;
  available_models?: string[];
}

type Details = Record<string, unknown> & { reason: string };

/** A G5 answer decided by the surface itself (request problems found before or around the core). */
export class G5RequestError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Details;
  constructor(status: number, code: string, message: string, details: Details) {
    super(message);
    this.name = 'G5RequestError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const MESSAGE_PROBLEMS = 5;

/** 400 INVALID_REQUEST for one or more problems, in the order found. */
export function invalidRequest(problems: readonly G5Problem[]): G5RequestError {
  const [first, ...rest] = problems;
  if (!first) throw new RangeError('invalidRequest needs at least one problem');
  const shown = problems.slice(0, MESSAGE_PROBLEMS).map((p) => `${p.field} ${p.message}`).join('; ');
  const more = problems.length > MESSAGE_PROBLEMS ? ` (and ${problems.length - MESSAGE_PROBLEMS} more)` : '';
  const details: Details = { ...first, ...(rest.length > 0 ? { errors: problems.map((p) => ({ ...p })) } : {}) };
  return new G5RequestError(400, 'INVALID_REQUEST', `Invalid request: ${shown}${more}`, details);
}

/** The core's reasons as G5 names them; any other is `invalid_value`. */
const G5_REASONS: Partial<Record<FieldReason, G5Reason>> = {
  required: 'missing_required_field',
  invalid_type: 'invalid_type',
  empty: 'empty_input',
  too_many: 'too_many_inputs',
  too_long: 'input_too_long',
};

/** The core's field problems with G5 reasons; `rename` maps core field names to wire names. */
export function problemsFromFields(
  fields: readonly FieldProblem[], availableModels?: string[], rename: (field: string) => string = (f) => f,
): G5Problem[] {
  return fields.map(({ field, reason, message }) => {
    const wire = rename(field);
    if (availableModels) return { field: wire, reason: 'unknown_model', message, available_models: availableModels };
    return { field: wire, reason: G5_REASONS[reason] ?? 'invalid_value', message };
  });
}

interface Rendered { status: number; code: string; message: string; details: Details }

const EMBEDDING_UNAVAILABLE = 'The embedding model is unavailable; try again later';
const rateLimited = (b: WireBase, e: DomainError): Rendered => {
  const limit = e.details.limit;
  return {
    ...b,
    details: limit
      ? { reason: 'rate_limit_exceeded', limit: limit.limit, remaining: limit.remaining, reset_at: isoTimestamp(limit.resetAt) }
      : { reason: 'rate_limit_exceeded' },
  };
};

/** Every domain error as G5 answers it (docs/api.md renders this table); `details.reason` is always set. */
export const G5_ERRORS = errorTable<Rendered>({
  VALIDATION_FAILED: {
    status: 400, code: 'INVALID_REQUEST',
    build: (b, e) => {
      const available = Array.isArray(e.details.availableModels) ? e.details.availableModels as string[] : undefined;
      const problems = problemsFromFields(e.details.fields ?? [], available);
      return problems.length > 0 ? fromG5(invalidRequest(problems)) : { ...b, details: { reason: 'invalid_value' } };
    },
  },
  UNAUTHENTICATED: {
    status: 401, code: 'UNAUTHORIZED',
    build: (b, _e, req) => ({
      ...b, details: { field: 'Authorization', reason: readCredential(req, 'bearer') !== undefined ? 'invalid_api_key' : 'missing_api_key' },
    }),
  },
  PERMISSION_DENIED: { status: 403, code: 'PERMISSION_DENIED', build: (b) => ({ ...b, details: { reason: 'permission_denied' } }) },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMITED', build: rateLimited },
  CONTENT_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', build: (b) => ({ ...b, details: { field: 'body', reason: 'payload_too_large' } }) },
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: EMBEDDING_UNAVAILABLE, build: (b) => ({ ...b, details: { reason: 'embedding_unavailable' } }) },
  TIMEOUT: { status: 503, code: 'SERVICE_UNAVAILABLE', message: EMBEDDING_UNAVAILABLE, build: (b) => ({ ...b, details: { reason: 'embedding_unavailable' } }) },
  OVERLOADED: { status: 503, code: 'SERVICE_UNAVAILABLE', build: (b) => ({ ...b, details: { reason: 'overloaded' } }) },
  // Not produced by the embeddings route; rendered sensibly all the same.
  NOT_FOUND: { status: 404, code: 'NOT_FOUND', build: (b) => ({ ...b, details: { reason: 'not_found' } }) },
  AMBIGUOUS_ID: { status: 409, code: 'CONFLICT', build: (b) => ({ ...b, details: { reason: 'conflict' } }) },
  CONFLICT: { status: 409, code: 'CONFLICT', build: (b) => ({ ...b, details: { reason: 'conflict' } }) },
});

function fromRequestProblem(p: RequestProblem): Rendered {
  switch (p.kind) {
    case 'validation': {
      const problems = problemsFromFields(p.fields);
      return problems.length > 0 ? fromG5(invalidRequest(problems))
        : { status: 400, code: 'INVALID_REQUEST', message: p.message, details: { reason: 'invalid_value' } };
    }
    case 'malformed_json':
      return fromG5(invalidRequest([{ field: 'body', reason: 'invalid_json', message: p.empty ? 'is empty; a JSON object is required' : 'is not valid JSON' }]));
    case 'unsupported_media_type':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json', details: { field: 'Content-Type', reason: 'unsupported_media_type' } };
    case 'payload_too_large':
      return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: { field: 'body', reason: 'payload_too_large' } };
    case 'not_found':
      return { status: 404, code: 'NOT_FOUND', message: p.message, details: { reason: 'not_found' } };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: { reason: 'method_not_allowed' } };
  }
}

const fromG5 = (e: G5RequestError): Rendered => ({ status: e.status, code: e.code, message: e.message, details: e.details });

/** Renders every error under `/api/v1/embeddings`, framework errors and unknown paths included. */
export function createG5ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<Rendered>({
    fromOwn: (error) => (error instanceof G5RequestError ? fromG5(error) : null),
    fromDomain: (e, req) => fromErrorTable(G5_ERRORS, e, req, (b) => ({ ...b, details: { reason: 'invalid_value' } })),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: { reason: 'internal_error' } },
    send: (e, req, reply) => {
      if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
      return reply.status(e.status).send({
        success: false,
        error: { code: e.code, message: e.message, details: e.details, request_id: req.id, timestamp: isoTimestamp(clock.now()) },
      });
    },
  });
}
