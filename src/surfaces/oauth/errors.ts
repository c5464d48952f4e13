import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isOAuthError, type OAuthErrorCode } from '../../core/oauth/oauth.errors.ts';
import { retryAfterSeconds } from '../http-kit/auth.ts';
import { classifyRequestError } from '../http-kit/request-problems.ts';

/** RFC 6749 §5.2: 400, but 401 for a client that is not known; 429 when registrations are throttled. */
const STATUS: Partial<Record<OAuthErrorCode, number>> = { invalid_client: 401, temporarily_unavailable: 429 };

/**
 * Every refusal of the OAuth endpoints in OAuth's envelope `{error, error_description}` (never a DomainError
 * envelope): the protocol's codes, a body a person can read, and no caching.
 */
export function oauthErrorHandler(error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('Cache-Control', 'no-store');
  if (isOAuthError(error)) {
    if (error.retryAfterMs !== undefined) reply.header('Retry-After', retryAfterSeconds(error.retryAfterMs));
    return reply.status(STATUS[error.error] ?? 400).send({ error: error.error, error_description: error.description });
  }
  const problem = classifyRequestError(error as FastifyError);
  if (problem) {
    const status = { validation: 400, malformed_json: 400, unsupported_media_type: 415, payload_too_large: 413, not_found: 404, method_not_allowed: 405 }[problem.kind];
    return reply.status(status).send({ error: 'invalid_request', error_description: problem.message });
  }
  req.log.error({ err: error }, 'OAuth request failed');
  return reply.status(500).send({ error: 'server_error', error_description: 'The server could not answer this request' });
}

/** A form or JSON body's field as text (the last when repeated), or undefined. */
export function bodyField(req: FastifyRequest, name: string): string | undefined {
  const body = req.body as Record<string, unknown> | null | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  const last = Array.isArray(v) ? v.at(-1) : v;
  return typeof last === 'string' && last !== '' ? last : undefined;
}
