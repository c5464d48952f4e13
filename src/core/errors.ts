/**
 * Domain errors: what went wrong, in the core's words. Each surface maps every code to its own wire code and
 * HTTP status through one table (surfaces/http-kit/error-table.ts); the core knows no HTTP.
 */
export const DOMAIN_ERROR_CODES = [
  'VALIDATION_FAILED',
  'NOT_FOUND',
  'AMBIGUOUS_ID',
  'CONTENT_TOO_LARGE',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'RATE_LIMITED',
  'QUOTA_EXCEEDED',
  'EMBEDDING_FAILED',
  'TIMEOUT',
  'CONFLICT',
  /** The server is too busy to take this on now (details.retryAfterMs says when to try again). */
  'OVERLOADED',
  /**
   * An `Idempotency-Key` already used (within its lifetime) for a different request: the same key must carry the
   * same request (G11). G10's producer events answer this case as CONFLICT, as they always have.
   */
  'IDEMPOTENCY_KEY_REUSED',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/**
 * Why a field was refused, for machines: surfaces that expose a reason take it from here, never from the
 * English message.
 */
export type FieldReason =
  /** Absent but needed. */
  | 'required'
  /** Of the wrong JSON type. */
  | 'invalid_type'
  /** Not in the expected shape (a pattern, a UUID, a date-time, a URL). */
  | 'invalid_format'
  /** Of the right type and shape, but not a value accepted here (not one of a list, say). */
  | 'invalid_value'
  /** Empty or blank where text is needed. */
  | 'empty'
  /** Longer than allowed (characters, bytes or tokens). */
  | 'too_long'
  | 'too_short'
  /** More entries (items, keys, texts) than allowed. */
  | 'too_many'
  | 'too_few'
  /** A number outside its bounds. */
  | 'out_of_range'
  /** Nested deeper than allowed. */
  | 'too_deep'
  /** Present but not allowed here (an unknown or forbidden key, an unsupported option). */
  | 'not_allowed'
  /** Names something that does not exist (a topic, a model, an event type). */
  | 'not_found'
  /** Matches more than one thing. */
  | 'ambiguous'
  /** At odds with the stored state (a cycle, an idempotency key reused). */
  | 'conflict';

export interface FieldProblem {
  field: string;
  reason: FieldReason;
  message: string;
}

export interface DomainErrorDetails {
  fields?: FieldProblem[];
  /** For RATE_LIMITED / QUOTA_EXCEEDED. */
  limit?: { limit: number; remaining: number; resetAt: Date; retryAfterMs: number; bucket: string };
  /** For OVERLOADED. */
  retryAfterMs?: number;
  /** Anything else a surface may render. */
  [key: string]: unknown;
}

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details: DomainErrorDetails;

  constructor(code: DomainErrorCode, message: string, details: DomainErrorDetails = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = details;
  }
}

export const validationError = (fields: FieldProblem[], message = 'Request validation failed'): DomainError =>
  new DomainError('VALIDATION_FAILED', message, { fields });

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
