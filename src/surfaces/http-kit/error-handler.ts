import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError, type DomainError } from '../../core/errors.ts';
import { retryAfterSeconds, setRateLimitHeaders } from './auth.ts';
import { classifyRequestError, type RequestProblem } from './request-problems.ts';

/**
 * What a surface decides about its errors; everything else (which kind of error it is, rate-limit headers, logging
 * real failures) is the same for every surface and lives in `createSurfaceErrorHandler`.
 */
export interface SurfaceErrors<E> {
  /** Errors the surface's own code throws (request-level problems of its own); null to fall through. */
  fromOwn?: (error: unknown, req: FastifyRequest) => E | null;
  fromDomain: (error: DomainError, req: FastifyRequest) => E;
  fromRequestProblem: (problem: RequestProblem, req: FastifyRequest) => E;
  /** The answer for an unexpected failure (logged; never used for bad input). */
  internal: E;
  send: (e: E, req: FastifyRequest, reply: FastifyReply) => FastifyReply;
}

/** Retry-After (and X-RateLimit-*) for a domain error that says when to try again: a limit hit, or an overload. */
export function setRetryHeaders(reply: FastifyReply, error: DomainError): void {
  const limit = error.details.limit;
  if (limit) {
    reply.header('Retry-After', retryAfterSeconds(limit.retryAfterMs));
    setRateLimitHeaders(reply, limit);
  }
  if (error.code === 'OVERLOADED') reply.header('Retry-After', retryAfterSeconds(error.details.retryAfterMs ?? 1000));
}

export function createSurfaceErrorHandler<E extends object>(surface: SurfaceErrors<E>) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    let e: E | null = surface.fromOwn?.(error, req) ?? null;
    if (e === null && isDomainError(error)) {
      e = surface.fromDomain(error, req);
      setRetryHeaders(reply, error);
    }
    if (e === null) {
      const problem = classifyRequestError(error);
      if (problem) e = surface.fromRequestProblem(problem, req);
    }
    if (e === null) {
      req.log.error({ err: error }, 'unhandled error');
      e = surface.internal;
    }
    return surface.send(e, req, reply);
  };
}
