import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { DomainError } from '../../core/errors.ts';
import { readCredential } from '../http-kit/auth.ts';
import { createSurfaceErrorHandler } from '../http-kit/error-handler.ts';
import { errorTable, fromErrorTable, type WireBase } from '../http-kit/error-table.ts';
import type { RequestProblem } from '../http-kit/request-problems.ts';
import { wireFields } from '../http-kit/wire-fields.ts';
import { mcpConflictDetails, mcpDeniedDetails } from './mcp.errors.ts';

/**
 * The G11 envelope: `{error: {code, message, details}}` with the spec's codes (VALIDATION_ERROR 400,
 * AUTHENTICATION_REQUIRED 401, PERMISSION_DENIED 403, RESOURCE_NOT_FOUND 404, RATE_LIMIT_EXCEEDED 429,
 * INTERNAL_ERROR 500) and, where the spec names none, CONFLICT 409, PAYLOAD_TOO_LARGE 413, UNSUPPORTED_MEDIA_TYPE
 * 415, IDEMPOTENCY_KEY_REUSED 422 and SERVICE_UNAVAILABLE 503. `details` is an object: `fields` ([{field, message}])
 * for a 400, `reason` for a 401, `requiredScope` (a scope the route needs) or `field` (what an API-key request asked
 * beyond the caller's own) for a 403, `field` for a 409 or 422 that names one, `limit`, `remaining` and `resetAt`
 * for a 429.
 */
type Details = Record<string, unknown>;
interface G11Error { status: number; code: string; message: string; details: Details }

export const G11ErrorWire = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
  }),
});

const rateLimited = (b: WireBase, e: DomainError): G11Error => {
  const limit = e.details.limit;
  return { ...b, details: limit ? { limit: limit.limit, remaining: limit.remaining, resetAt: isoTimestamp(limit.resetAt) } : {} };
};

/** `details.field`, when the error names one (a 409's `name` or `Idempotency-Key`, a 422's `Idempotency-Key`). */
const withField = (b: WireBase, e: DomainError): G11Error => ({ ...b, details: typeof e.details.field === 'string' ? { field: e.details.field } : {} });

/** Every domain error as G11 answers it (docs/api.md renders this table). */
export const G11_ERRORS = errorTable<G11Error>({
  VALIDATION_FAILED: { status: 400, code: 'VALIDATION_ERROR', build: (b, e) => ({ ...b, details: { fields: wireFields(e.details.fields) } }) },
  UNAUTHENTICATED: {
    status: 401, code: 'AUTHENTICATION_REQUIRED',
    build: (b, _e, req) => ({ ...b, details: { reason: readCredential(req, 'bearer') === undefined ? 'missing_api_key' : 'invalid_api_key' } }),
  },
  PERMISSION_DENIED: {
    status: 403, code: 'PERMISSION_DENIED',
    // requiredScope: the scope a route needs; field: what an API-key request asked for beyond the caller's own.
    build: (b, e) => ({
      ...b,
      details: {
        ...(e.details.requiredScope ? { requiredScope: e.details.requiredScope } : {}),
        ...(typeof e.details.field === 'string' ? { field: e.details.field } : {}),
        ...mcpDeniedDetails(e.details),
      },
    }),
  },
  NOT_FOUND: { status: 404, code: 'RESOURCE_NOT_FOUND' },
  AMBIGUOUS_ID: { status: 409, code: 'CONFLICT' },
  CONFLICT: {
    status: 409, code: 'CONFLICT',
    build: (b, e) => ({ ...b, details: { ...(typeof e.details.field === 'string' ? { field: e.details.field } : {}), ...mcpConflictDetails(e.details) } }),
  },
  IDEMPOTENCY_KEY_REUSED: { status: 422, code: 'IDEMPOTENCY_KEY_REUSED', build: withField },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMIT_EXCEEDED', build: rateLimited },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMIT_EXCEEDED', build: rateLimited },
});

function fromRequestProblem(p: RequestProblem): G11Error {
  switch (p.kind) {
    case 'validation': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: { fields: wireFields(p.fields) } };
    case 'malformed_json': return { status: 400, code: 'VALIDATION_ERROR', message: p.message, details: { fields: [{ field: 'body', message: p.message }] } };
    case 'unsupported_media_type': return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json', details: { field: 'Content-Type' } };
    case 'payload_too_large': return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: p.message, details: {} };
    case 'not_found': return { status: 404, code: 'RESOURCE_NOT_FOUND', message: p.message, details: {} };
    case 'method_not_allowed': return { status: 405, code: 'METHOD_NOT_ALLOWED', message: p.message, details: {} };
  }
}

/** The answer to an unexpected failure: nothing about it leaves the server. */
export const G11_INTERNAL_ERROR: G11Error = { status: 500, code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} };

/** The G11 body of an error. */
export const g11ErrorBody = (e: G11Error) => ({ error: { code: e.code, message: e.message, details: e.details } });

export function createG11ErrorHandler(_clock: Clock) {
  return createSurfaceErrorHandler<G11Error>({
    fromDomain: (e, req) => fromErrorTable(G11_ERRORS, e, req, (b) => ({ ...b, details: {} })),
    fromRequestProblem: (p) => fromRequestProblem(p),
    internal: G11_INTERNAL_ERROR,
    send: (e, _req, reply) => {
      if (e.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo"');
      return reply.status(e.status).send(g11ErrorBody(e));
    },
  });
}
