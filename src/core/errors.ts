/**
 * Domain errors: what went wrong, in the core's words. Each surface maps a code to its own wire code and
 * HTTP status; the core knows no HTTP.
 */
export type DomainErrorCode =
  | 'VALIDATION_FAILED'
  | 'NOT_FOUND'
  | 'AMBIGUOUS_ID'
  | 'CONTENT_TOO_LARGE'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'EMBEDDING_FAILED'
  | 'TIMEOUT'
  | 'CONFLICT'
  /** The server is too busy to take this on now (details.retryAfterMs says when to try again). */
  | 'OVERLOADED';

export interface FieldProblem {
  field: string;
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
