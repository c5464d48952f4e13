import type { FastifyRequest } from 'fastify';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError, FieldProblem } from '../../core/errors.ts';
import { readCredential } from '../http-kit/auth.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';

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

/** The core's field problems (messages only) with G5 reasons; `rename` maps core field names to wire names. */
export function problemsFromFields(
  fields: readonly FieldProblem[], availableModels?: string[], rename: (field: string) => string = (f) => f,
): G5Problem[] {
  return fields.map(({ field, message }) => {
    const wire = rename(field);
    if (availableModels) return { field: wire, reason: 'unknown_model', message, available_models: availableModels };
    return { field: wire, reason: reasonOf(message), message };
  });
}

function reasonOf(message: string): G5Reason {
  if (/tokens; at most/.test(message)) return 'input_too_long';
  if (/texts per request/.test(message)) return 'too_many_inputs';
  if (/must not be empty/.test(message)) return 'empty_input';
  if (message === 'is required') return 'missing_required_field';
  return 'invalid_value';
}

interface Rendered { status: number; code: string; message: string; details: Details }

function fromDomain(e: DomainError, req: FastifyRequest): Rendered {
  switch (e.code) {
    case 'VALIDATION_FAILED': {
      const available = Array.isArray(e.details.availableModels) ? e.details.availableModels as string[] : undefined;
      const problems = problemsFromFields(e.details.fields ?? [], available);
      if (problems.length > 0) return fromG5(invalidRequest(problems));
      return { status: 400, code: 'INVALID_REQUEST', message: e.message, details: { reason: 'invalid_value' } };
    }
    case 'UNAUTHENTICATED': {
      const presented = readCredential(req, 'bearer') !== undefined;
      return {
        status: 401, code: 'UNAUTHORIZED', message: e.message,
        details: { field: 'Authorization', reason: presented ? 'invalid_api_key' : 'missing_api_key' },
      };
    }
    case 'PERMISSION_DENIED': return { status: 403, code: 'PERMISSION_DENIED', message: e.message, details: { reason: 'permission_denied' } };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED': {
      const limit = e.details.limit;
      return {
        status: 429, code: 'RATE_LIMITED', message: e.message,
        details: limit
          ? { reason: 'rate_limit_exceeded', limit: limit.limit, remaining: limit.remaining, reset_at: isoTimestamp(limit.resetAt) }
          : { reason: 'rate_limit_exceeded' },
      };
    }
    case 'CONTENT_TOO_LARGE': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: e.message, details: { field: 'body', reason: 'payload_too_large' } };
    case 'EMBEDDING_FAILED':
    case 'TIMEOUT':
      return { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; try again later', details: { reason: 'embedding_unavailable' } };
    case 'OVERLOADED': return { status: 503, code: 'SERVICE_UNAVAILABLE', message: e.message, details: { reason: 'overloaded' } };
    // Not produced by the embeddings route; rendered sensibly all the same.
    case 'NOT_FOUND': return { status: 404, code: 'NOT_FOUND', message: e.message, details: { reason: 'not_found' } };
    case 'AMBIGUOUS_ID':
    case 'CONFLICT':
      return { status: 409, code: 'CONFLICT', message: e.message, details: { reason: 'conflict' } };
  }
}

function fromRequestProblem(p: RequestProblem): Rendered {
  switch (p.kind) {
    case 'validation': {
      const problems = problemsFromFields(p.fields);
      return problems.length > 0 ? fromG5(invalidRequest(problems))
        : { status: 400, code: 'INVALID_REQUEST', message: p.message, details: { reason: 'invalid_value' } };
    }
    case 'malformed_json':
      return fromG5(invalidRequest([{ field: 'body', reason: 'invalid_json', message: /empty/.test(p.message) ? 'is empty; a JSON object is required' : 'is not valid JSON' }]));
    case 'unsupported_media_type':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json', details: { field: 'Content-Type', reason: 'unsupported_media_type' } };
    case 'payload_too_large':
      return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: { field: 'body', reason: 'payload_too_large' } };
    case 'not_found':
      return { status: 404, code: 'NOT_FOUND', message: p.message, details: { reason: 'not_found' } };
  }
}

const fromG5 = (e: G5RequestError): Rendered => ({ status: e.status, code: e.code, message: e.message, details: e.details });

/** Renders every error under `/api/v1/embeddings`, framework errors and unknown paths included. */
export function createG5ErrorHandler(clock: Clock) {
  return createSurfaceErrorHandler<Rendered>({
    fromOwn: (error) => (error instanceof G5RequestError ? fromG5(error) : null),
    fromDomain,
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
