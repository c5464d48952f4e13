import { randomBytes } from 'node:crypto';
import { digestKey } from '../api-keys/api-key.format.ts';
import type { ApiKeyRepository } from '../api-keys/api-key.repository.ts';
import { assertMayGrant } from '../api-keys/api-key.rules.ts';
import type { ApiKeyRecord, Permission, Principal } from '../api-keys/api-key.types.ts';
import type { AuditService } from '../audit/audit.service.ts';
import type { Clock } from '../clock.ts';
import { DomainError, validationError } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import type { CallOrigin } from '../operations/runner.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.port.ts';
import { workspaceProblem } from '../scope.ts';
import { OAuthError } from './oauth.errors.ts';
import type { OAuthRepository } from './oauth.repository.ts';
import {
  ACCESS_TOKEN_PREFIX, CODE_TTL_MS, effectiveScopes, parseClientMetadata, parseScopeParam, pkceMatches, REFRESH_TOKEN_PREFIX,
  REFRESH_TTL_MS, REGISTRATIONS_PER_ADDRESS_PER_HOUR, REGISTRATIONS_PER_HOUR, S256_CHALLENGE,
} from './oauth.rules.ts';
import type { OAuthClient, OAuthGrant, OAuthGrantView, OAuthToken } from './oauth.types.ts';

export interface OAuthSettings {
  /** The authorization server's issuer: Mnemo's public base URL (RFC 8414, RFC 9207 `iss`). */
  issuer: string;
  /** The one protected resource: `<public base>/mcp` (RFC 8707 `resource` must name it when given). */
  resource: string;
  accessTtlSeconds: number;
}

/** An authorization request as checked, ready for the consent page. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string | null;
  /** The scopes the client asked for (absent: none named; the page then offers the key's). */
  requestedScopes: Permission[] | undefined;
}

/**
 * A refused authorization request: `redirect` when the client and its redirect URI are known (the error goes back to
 * the client, RFC 6749 §4.1.2.1), else only the error, for the person (never redirected to an unchecked URI).
 */
export type AuthorizationCheck = { ok: true; request: AuthorizationRequest } | { ok: false; error: OAuthError; redirect?: string };

/** A token endpoint's success (RFC 6749 §5.1). */
export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Who an access token acts for: its key's principal narrowed to the grant, confined to the grant's workspace. */
export interface OAuthCaller {
  principal: Principal;
  workspace: string;
  grantId: string;
}

export type OAuthService = ReturnType<typeof createOAuthService>;

const HOUR_MS = 3_600_000;
/** A grant's "last used" is written at most this often (not on every MCP request). */
const TOUCH_EVERY_MS = 60_000;

const secretText = (prefix = ''): string => `${prefix}${randomBytes(32).toString('base64url')}`;
const keyIsLive = (key: ApiKeyRecord | null, now: Date): key is ApiKeyRecord =>
  key !== null && !(key.revokedAt && key.revokedAt <= now) && !(key.expiresAt && key.expiresAt <= now);

/**
 * Mnemo as its own OAuth 2.1 authorization server for remote MCP clients (docs/oauth.md): dynamic registration,
 * the consent decision, code and refresh-token exchange, revocation, and turning an access token into a principal.
 * Every decision (what may be granted, single use, reuse detection, expiry) and every audit row is made here; the
 * HTTP routes only map requests and answers.
 */
export function createOAuthService(deps: {
  oauth: OAuthRepository; keys: Pick<ApiKeyRepository, 'findById'>; audit: Pick<AuditService, 'record'>;
  limiter: RateLimiter; clock: Clock; settings: OAuthSettings;
}) {
  const { oauth, keys, audit, limiter, clock, settings } = deps;

  const recordGrantEvent = (grant: OAuthGrant, action: 'oauth.grant' | 'oauth.revoke' | 'oauth.refresh_reuse' | 'oauth.code_reuse',
    status: number, origin: Partial<CallOrigin>, metadata: Record<string, unknown>, actor?: Principal) => audit.record({
    owner: { tenantId: grant.tenantId, mode: grant.mode },
    actor: actor ? { userId: actor.userId, keyId: actor.keyId } : { userId: grant.userId, keyId: grant.keyId },
    action, resource: `oauth-grant:${grant.id}`, outcome: status < 400 ? 'success' : 'failure', status,
    ip: origin.ip ?? null, userAgent: origin.userAgent ?? null, requestId: origin.requestId ?? null,
    metadata: { client: grant.clientId, workspace: grant.workspace, ...metadata },
  });

  /** Ends a grant whose code or refresh token was presented twice (RFC 6749 §4.1.2, OAuth 2.1 §4.3.1): someone else holds it. */
  async function revokeOnReuse(grant: OAuthGrant | null, action: 'oauth.refresh_reuse' | 'oauth.code_reuse', origin: Partial<CallOrigin>) {
    if (grant && await oauth.revokeGrant(grant.id, clock.now())) await recordGrantEvent(grant, action, 400, origin, { reason: 'reused' });
  }

  async function issueTokens(grantId: string, now: Date): Promise<{ tokens: OAuthToken[]; access: string; refresh: string }> {
    const access = secretText(ACCESS_TOKEN_PREFIX);
    const refresh = secretText(REFRESH_TOKEN_PREFIX);
    const tokens: OAuthToken[] = [
      { digest: digestKey(access), grantId, kind: 'access', createdAt: now, expiresAt: new Date(now.getTime() + settings.accessTtlSeconds * 1000), usedAt: null },
      { digest: digestKey(refresh), grantId, kind: 'refresh', createdAt: now, expiresAt: new Date(now.getTime() + REFRESH_TTL_MS), usedAt: null },
    ];
    return { tokens, access, refresh };
  }

  const tokenSet = (issued: { access: string; refresh: string }, scopes: readonly Permission[]): TokenSet => ({
    access_token: issued.access, token_type: 'Bearer', expires_in: settings.accessTtlSeconds, refresh_token: issued.refresh, scope: scopes.join(' '),
  });

  async function clientOf(clientId: string | undefined): Promise<OAuthClient> {
    if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
    const client = await oauth.findClient(clientId);
    if (!client) throw new OAuthError('invalid_client', 'Unknown client_id');
    return client;
  }

  function checkResource(resource: string | undefined): string | null {
    if (resource === undefined || resource === '') return null;
    if (resource.replace(/\/+$/, '') !== settings.resource) throw new OAuthError('invalid_target', `resource must be ${settings.resource}`);
    return settings.resource;
  }

  return {
    settings,

    /** RFC 7591 registration, limited per client address and overall so that anonymous callers cannot fill the store. */
    async register(body: unknown, ip: string | null): Promise<OAuthClient> {
      const metadata = parseClientMetadata(body);
      for (const [bucket, limit] of [[`oauth-register:${ip ?? 'unknown'}`, REGISTRATIONS_PER_ADDRESS_PER_HOUR], ['oauth-register:*', REGISTRATIONS_PER_HOUR]] as const) {
        const decision = await limiter.hit(bucket, limit, HOUR_MS);
        if (!decision.allowed) throw new OAuthError('temporarily_unavailable', 'Too many client registrations; try again later', decision.retryAfterMs);
      }
      const client: OAuthClient = { id: prefixedId('mcl', 24), name: metadata.name, redirectUris: metadata.redirectUris, createdAt: clock.now() };
      await oauth.insertClient(client);
      return client;
    },

    /** Checks `GET /oauth/authorize`'s parameters (RFC 6749 §4.1.1, RFC 7636, RFC 8707) before the consent page shows. */
    async checkAuthorization(q: Record<string, string | undefined>): Promise<AuthorizationCheck> {
      const client = q.client_id ? await oauth.findClient(q.client_id) : null;
      if (!client) return { ok: false, error: new OAuthError('invalid_client', q.client_id ? 'Unknown client_id' : 'client_id is required') };
      const redirectUri = q.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
      if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
        return { ok: false, error: new OAuthError('invalid_request', 'redirect_uri is not one this client registered') };
      }
      const refuse = (error: OAuthError): AuthorizationCheck => ({ ok: false, error, redirect: errorRedirect(redirectUri, error, q.state) });
      if (q.response_type !== 'code') return refuse(new OAuthError('unsupported_response_type', 'response_type must be code'));
      if (!q.code_challenge) return refuse(new OAuthError('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256'));
      if ((q.code_challenge_method ?? 'plain') !== 'S256') return refuse(new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is refused)'));
      if (!S256_CHALLENGE.test(q.code_challenge)) return refuse(new OAuthError('invalid_request', 'code_challenge must be 43 characters of base64url'));
      try {
        const resource = checkResource(q.resource);
        return { ok: true, request: { client, redirectUri, state: q.state, codeChallenge: q.code_challenge, resource, requestedScopes: parseScopeParam(q.scope) } };
      } catch (err) {
        if (err instanceof OAuthError) return refuse(err);
        throw err;
      }
    },

    /**
     * The signed-in person approved: a code for the scopes and workspace they chose, which must all be held by
     * their key (403 otherwise, whatever the form sent). Audited as `oauth.grant`. Returns where to send the browser.
     */
    async approve(caller: Principal, request: AuthorizationRequest, choice: { workspace: string; scopes: readonly string[] }, origin: Partial<CallOrigin>): Promise<string> {
      const problem = workspaceProblem(choice.workspace, 'workspace');
      if (problem) throw validationError([problem], 'Invalid workspace');
      if (choice.scopes.length === 0) throw validationError([{ field: 'scopes', reason: 'too_few', message: 'pick at least one scope' }]);
      let scopes: Permission[];
      try {
        scopes = parseScopeParam(choice.scopes.join(' '))!;
      } catch (err) {
        throw validationError([{ field: 'scopes', reason: 'invalid_value', message: (err as Error).message }]);
      }
      assertMayGrant(caller, { scopes });
      const now = clock.now();
      const code = secretText();
      const grant = {
        id: prefixedId('ogr', 24), clientId: request.client.id, tenantId: caller.tenantId, mode: caller.mode, workspace: choice.workspace,
        keyId: caller.keyId, userId: caller.userId, scopes,
      };
      await oauth.insertCode({
        digest: digestKey(code), clientId: request.client.id, redirectUri: request.redirectUri, codeChallenge: request.codeChallenge,
        resource: request.resource, grant, createdAt: now, expiresAt: new Date(now.getTime() + CODE_TTL_MS), usedAt: null,
      });
      await recordGrantEvent({ ...grant, createdAt: now, lastUsedAt: null, revokedAt: null }, 'oauth.grant', 200, origin,
        { clientName: request.client.name, scopes: scopes.length }, caller);
      const url = new URL(request.redirectUri);
      url.searchParams.set('code', code);
      if (request.state !== undefined) url.searchParams.set('state', request.state);
      url.searchParams.set('iss', settings.issuer);
      return url.href;
    },

    /** The person declined: `access_denied` back to the client. */
    deny: (request: AuthorizationRequest): string =>
      errorRedirect(request.redirectUri, new OAuthError('access_denied', 'The person declined the request'), request.state),

    /** `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6): single use, 60 s, PKCE S256, same redirect URI. */
    async exchangeCode(p: { clientId?: string; code?: string; codeVerifier?: string; redirectUri?: string; resource?: string }, origin: Partial<CallOrigin> = {}): Promise<TokenSet> {
      const client = await clientOf(p.clientId);
      if (!p.code) throw new OAuthError('invalid_request', 'code is required');
      if (!p.codeVerifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
      checkResource(p.resource);
      const code = await oauth.findCode(digestKey(p.code));
      if (!code || code.clientId !== client.id) throw new OAuthError('invalid_grant', 'The authorization code is invalid');
      if (code.usedAt) {
        await revokeOnReuse(await oauth.findGrant(code.grant.id), 'oauth.code_reuse', origin);
        throw new OAuthError('invalid_grant', 'The authorization code was already used; the access it gave is revoked');
      }
      const now = clock.now();
      if (code.expiresAt <= now) throw new OAuthError('invalid_grant', 'The authorization code has expired');
      if (p.redirectUri !== code.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
      if (!pkceMatches(p.codeVerifier, code.codeChallenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
      if (!keyIsLive(await keys.findById(code.grant.keyId), now)) throw new OAuthError('invalid_grant', 'The API key that granted this access no longer works');
      const issued = await issueTokens(code.grant.id, now);
      const grant: OAuthGrant = { ...code.grant, createdAt: now, lastUsedAt: now, revokedAt: null };
      if (!await oauth.redeemCode(code.digest, now, grant, issued.tokens)) {
        await revokeOnReuse(await oauth.findGrant(code.grant.id), 'oauth.code_reuse', origin);
        throw new OAuthError('invalid_grant', 'The authorization code was already used; the access it gave is revoked');
      }
      return tokenSet(issued, grant.scopes);
    },

    /**
     * `grant_type=refresh_token` (RFC 6749 §6) with rotation: each refresh token works once; presenting a spent one
     * again revokes the whole grant (audited `oauth.refresh_reuse`).
     */
    async refresh(p: { clientId?: string; refreshToken?: string; scope?: string; resource?: string }, origin: Partial<CallOrigin> = {}): Promise<TokenSet> {
      const client = await clientOf(p.clientId);
      if (!p.refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
      checkResource(p.resource);
      const found = await oauth.findToken(digestKey(p.refreshToken));
      if (!found || found.token.kind !== 'refresh' || found.grant.clientId !== client.id) throw new OAuthError('invalid_grant', 'The refresh token is invalid');
      const { token, grant } = found;
      const reused = async () => {
        await revokeOnReuse(grant, 'oauth.refresh_reuse', origin);
        return new OAuthError('invalid_grant', 'The refresh token was already used; the access it gave is revoked');
      };
      if (token.usedAt) throw await reused();
      const now = clock.now();
      if (grant.revokedAt) throw new OAuthError('invalid_grant', 'The access was revoked');
      if (token.expiresAt <= now) throw new OAuthError('invalid_grant', 'The refresh token has expired');
      const asked = parseScopeParam(p.scope);
      if (asked && asked.some((s) => !grant.scopes.includes(s))) throw new OAuthError('invalid_scope', 'A refresh cannot widen the scopes granted');
      if (!keyIsLive(await keys.findById(grant.keyId), now)) throw new OAuthError('invalid_grant', 'The API key that granted this access no longer works');
      const issued = await issueTokens(grant.id, now);
      if (!await oauth.rotateRefresh(token.digest, now, issued.tokens)) throw await reused();
      await oauth.touchGrant(grant.id, now);
      return tokenSet(issued, grant.scopes);
    },

    /**
     * RFC 7009: revoking either token of a grant ends the grant (its other tokens too). An unknown token is no error
     * (§2.2); another client's token is refused.
     */
    async revokeToken(p: { clientId?: string; token?: string }, origin: Partial<CallOrigin> = {}): Promise<void> {
      const client = await clientOf(p.clientId);
      if (!p.token) throw new OAuthError('invalid_request', 'token is required');
      const found = await oauth.findToken(digestKey(p.token));
      if (!found) return;
      if (found.grant.clientId !== client.id) throw new OAuthError('invalid_client', 'This token was not issued to this client');
      if (await oauth.revokeGrant(found.grant.id, clock.now())) await recordGrantEvent(found.grant, 'oauth.revoke', 200, origin, { via: 'revocation_endpoint' });
    },

    /**
     * An access token presented to /mcp: the granting key's principal with the grant's scopes that the key still
     * holds, confined to the grant's workspace. A revoked grant, an expired token or a key that no longer works is
     * UNAUTHENTICATED.
     */
    async authenticate(presented: string): Promise<OAuthCaller> {
      const found = presented.startsWith(ACCESS_TOKEN_PREFIX) ? await oauth.findToken(digestKey(presented)) : null;
      if (!found || found.token.kind !== 'access') throw new DomainError('UNAUTHENTICATED', 'Access token is invalid');
      const { token, grant } = found;
      const now = clock.now();
      if (grant.revokedAt) throw new DomainError('UNAUTHENTICATED', 'Access token has been revoked');
      if (token.expiresAt <= now) throw new DomainError('UNAUTHENTICATED', 'Access token has expired');
      const key = await keys.findById(grant.keyId);
      if (!keyIsLive(key, now)) throw new DomainError('UNAUTHENTICATED', 'The API key that granted this access token no longer works');
      if (!grant.lastUsedAt || now.getTime() - grant.lastUsedAt.getTime() >= TOUCH_EVERY_MS) await oauth.touchGrant(grant.id, now);
      return {
        principal: {
          keyId: key.id, tenantId: key.tenantId, userId: key.userId, tier: key.tier, mode: key.mode,
          scopes: new Set(effectiveScopes(grant.scopes, key.scopes)), expiresAt: key.expiresAt,
        },
        workspace: grant.workspace,
        grantId: grant.id,
      };
    },

    /** The live grants of the caller's tenant and mode ("Connected apps"): unrevoked, and their key still working. */
    async listGrants(caller: Principal): Promise<OAuthGrantView[]> {
      const grants = await oauth.listGrants({ tenantId: caller.tenantId, mode: caller.mode });
      const now = clock.now();
      const liveKeys = new Set<string>();
      for (const keyId of new Set(grants.map((g) => g.keyId))) if (keyIsLive(await keys.findById(keyId), now)) liveKeys.add(keyId);
      return grants.filter((g) => liveKeys.has(g.keyId));
    },

    /**
     * A person revokes a grant from the dashboard: one of their tenant and mode (else NOT_FOUND), holding no scope
     * their key lacks (else PERMISSION_DENIED, as for managing keys). Audited as `oauth.revoke`.
     */
    async revokeGrant(caller: Principal, grantId: string, origin: Partial<CallOrigin>): Promise<void> {
      const grant = await oauth.findGrant(grantId);
      if (!grant || grant.tenantId !== caller.tenantId || grant.mode !== caller.mode || grant.revokedAt) {
        throw new DomainError('NOT_FOUND', `No connected app ${grantId}`);
      }
      const lacking = grant.scopes.filter((s) => !caller.scopes.has(s));
      if (lacking.length > 0) throw new DomainError('PERMISSION_DENIED', `This API key cannot revoke a grant holding scopes it lacks: ${lacking.join(', ')}`);
      if (await oauth.revokeGrant(grant.id, clock.now())) await recordGrantEvent(grant, 'oauth.revoke', 200, origin, { via: 'dashboard' }, caller);
    },
  };

  function errorRedirect(redirectUri: string, error: OAuthError, state: string | undefined): string {
    const url = new URL(redirectUri);
    url.searchParams.set('error', error.error);
    url.searchParams.set('error_description', error.description);
    if (state !== undefined) url.searchParams.set('state', state);
    url.searchParams.set('iss', settings.issuer);
    return url.href;
  }
}
