import type { FastifyRequest } from 'fastify';
import type { DomainError, DomainErrorCode } from '../../core/errors.ts';

/** A surface's answer to a domain error before its envelope and details: status, wire code, message. */
export interface WireBase { status: number; code: string; message: string }

/**
 * One row of a surface's error table: what a DomainErrorCode becomes on that surface. Most rows are a status and a
 * code; a row may also fix the message (where the core's words say too much or the wrong thing), and build the
 * surface's answer itself (details, or a code chosen by the error's details, listed in `variants` for the docs).
 */
export interface ErrorRule<E> {
  status: number;
  code: string;
  /** Replaces the core's message. */
  message?: string;
  /** Other codes `build` may answer with, chosen by the error's details. */
  variants?: readonly string[];
  /** The answer; without it, the surface's default builder. */
  build?: (base: WireBase, e: DomainError, req: FastifyRequest) => E;
}

/** Every DomainErrorCode has a row: a code added to the core without a row here does not compile. */
export type ErrorTable<E> = { readonly [C in DomainErrorCode]: ErrorRule<E> };

/** What most surfaces answer; each surface overrides the rows where its specification says otherwise. */
export const DEFAULT_ERROR_TABLE: ErrorTable<never> = {
  VALIDATION_FAILED: { status: 400, code: 'VALIDATION_ERROR' },
  NOT_FOUND: { status: 404, code: 'NOT_FOUND' },
  AMBIGUOUS_ID: { status: 409, code: 'CONFLICT' },
  CONTENT_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  UNAUTHENTICATED: { status: 401, code: 'UNAUTHORIZED' },
  PERMISSION_DENIED: { status: 403, code: 'PERMISSION_DENIED' },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED' },
  QUOTA_EXCEEDED: { status: 429, code: 'RATE_LIMITED' },
  // The core's message may name the provider (its URL, its error): not for clients.
  EMBEDDING_FAILED: { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The embedding model is unavailable; try again later' },
  TIMEOUT: { status: 504, code: 'TIMEOUT' },
  CONFLICT: { status: 409, code: 'CONFLICT' },
  OVERLOADED: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  // 422 as the IETF Idempotency-Key draft answers a key reused with another payload (409 is a key still in use).
  IDEMPOTENCY_KEY_REUSED: { status: 422, code: 'IDEMPOTENCY_KEY_REUSED' },
};

/** A surface's table: the shared rows with its own over them. */
export function errorTable<E>(overrides: Partial<ErrorTable<E>>): ErrorTable<E> {
  return { ...DEFAULT_ERROR_TABLE, ...overrides };
}

/** Looks the error up in the table; rows without a builder take the surface's `build`. */
export function fromErrorTable<E>(
  table: ErrorTable<E>, e: DomainError, req: FastifyRequest, build: (base: WireBase, e: DomainError) => E,
): E {
  const rule = table[e.code];
  const base: WireBase = { status: rule.status, code: rule.code, message: rule.message ?? e.message };
  return rule.build ? rule.build(base, e, req) : build(base, e);
}
