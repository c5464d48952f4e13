import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import { DomainError } from '../../core/errors.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import type { RateDecision } from '../../core/rate-limit/rate-limiter.port.ts';
import { DEFAULT_WORKSPACE, WORKSPACE_PATTERN, type Scope } from '../../core/scope.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth guard of the surface that serves the route. */
    principal: Principal | null;
  }
}

/** The header a surface's spec names for its key: G1 and G10 `X-API-Key`, the others `Authorization: Bearer`. */
export type CredentialStyle = 'x-api-key' | 'bearer';

/** What a 401 for a request without a usable key says, on every surface. */
export const MISSING_CREDENTIAL_MESSAGE = 'API key is missing: send it as X-API-Key: <key> or Authorization: Bearer <key>';

function apiKeyHeader(req: FastifyRequest): string | undefined {
  const v = req.headers['x-api-key'];
  return typeof v === 'string' && v.trim().length > 0 ? v.trim() : undefined;
}

function bearerHeader(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string') return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
}

/**
 * The key a request presents. Every surface accepts both `X-API-Key` and `Authorization: Bearer` (the spec names one
 * per surface; clients of this family send either); when both are sent, the header of the surface's spec wins.
 */
export function readCredential(req: FastifyRequest, preferred: CredentialStyle): string | undefined {
  return preferred === 'x-api-key' ? apiKeyHeader(req) ?? bearerHeader(req) : bearerHeader(req) ?? apiKeyHeader(req);
}

export interface AuthDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  limits: Pick<LimitsService, 'gateway'>;
}

/**
 * A preHandler that authenticates the caller, counts the request against the platform gateway limit of the
 * key's tier, and leaves the principal on the request. Failures throw DomainErrors for the surface to render.
 */
export function authGuard(deps: AuthDeps, style: CredentialStyle) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const credential = readCredential(req, style);
    if (credential === undefined) throw new DomainError('UNAUTHENTICATED', MISSING_CREDENTIAL_MESSAGE);
    const principal = await deps.apiKeys.authenticate(credential);
    req.principal = principal;
    const decision = await deps.limits.gateway(principal);
    if (decision) setRateLimitHeaders(reply, decision);
  };
}

export function setRateLimitHeaders(reply: FastifyReply, d: Pick<RateDecision, 'limit' | 'remaining' | 'resetAt'>): void {
  reply.header('X-RateLimit-Limit', d.limit);
  reply.header('X-RateLimit-Remaining', d.remaining);
  reply.header('X-RateLimit-Reset', Math.ceil(d.resetAt.getTime() / 1000));
}

/** Seconds for a Retry-After header: at least 1. */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export function requirePrincipal(req: FastifyRequest): Principal {
  if (!req.principal) throw new DomainError('UNAUTHENTICATED', MISSING_CREDENTIAL_MESSAGE);
  return req.principal;
}

/** The caller's scope: tenant and mode from the key, workspace from `X-Workspace-ID` (default `default`). */
export function scopeOf(req: FastifyRequest, workspaceOverride?: string): Scope {
  const principal = requirePrincipal(req);
  const header = req.headers['x-workspace-id'];
  const workspace = workspaceOverride ?? (typeof header === 'string' && header.length > 0 ? header : DEFAULT_WORKSPACE);
  if (!WORKSPACE_PATTERN.test(workspace)) {
    throw new DomainError('VALIDATION_FAILED', 'Invalid workspace id', {
      fields: [{ field: workspaceOverride === undefined ? 'X-Workspace-ID' : 'namespace',
        reason: 'invalid_format', message: 'must be 1-64 characters: letters, digits, _ . : -' }],
    });
  }
  return { tenantId: principal.tenantId, mode: principal.mode, workspace };
}
