import { createHash, timingSafeEqual } from 'node:crypto';
import { isPermission } from '../api-keys/api-key.rules.ts';
import { ALL_PERMISSIONS, type Permission } from '../api-keys/api-key.types.ts';
import { OAuthError } from './oauth.errors.ts';

/** How long things live: a code one minute (RFC 6749 §4.1.2 asks for minutes at most), a refresh token 30 days. */
export const CODE_TTL_MS = 60_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
export const DEFAULT_ACCESS_TTL_SECONDS = 3600;

/** Opaque bearer texts, recognisable in a header (so /mcp knows which authenticator to ask) and in a leak scan. */
export const ACCESS_TOKEN_PREFIX = 'mnemo_oat_';
export const REFRESH_TOKEN_PREFIX = 'mnemo_ort_';

export const CLIENT_NAME_MAX = 100;
export const REDIRECT_URIS_MAX = 10;
const REDIRECT_URI_MAX_LENGTH = 2000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const CONTROL = /\p{Cc}/u;

/** Registrations a client address may make per hour, and every address together (so the store cannot be filled). */
export const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 20;
export const REGISTRATIONS_PER_HOUR = 500;

/**
 * A redirect URI a client may register: https anywhere, or http on a loopback host only (RFC 8252 §7.3, the MCP
 * authorization spec), absolute, without fragment or credentials. Returns why not, or undefined.
 */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > REDIRECT_URI_MAX_LENGTH) return `must be a URL of at most ${REDIRECT_URI_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `is not an absolute URL: ${value}`;
  }
  if (url.hash !== '' || value.includes('#')) return `must not have a fragment: ${value}`;
  if (url.username !== '' || url.password !== '') return `must not carry credentials: ${value}`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return `must be https, or http on a loopback host (127.0.0.1, [::1], localhost): ${value}`;
}

/** What a registration request may carry (RFC 7591 §2), as checked; other metadata is ignored. */
export interface ClientMetadata {
  name: string;
  redirectUris: string[];
}

const listOf = (v: unknown): unknown[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

/**
 * Checks a registration request. Mnemo registers public clients only: a requested `token_endpoint_auth_method` other
 * than `none` is replaced (RFC 7591 §3.2.1 lets the server substitute values), so confidential clients use PKCE like
 * the others.
 */
export function parseClientMetadata(body: unknown): ClientMetadata {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_MAX) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be an array of 1-${REDIRECT_URIS_MAX} URLs`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris: ${problem}`);
  }
  const grantTypes = listOf(b.grant_types);
  if (grantTypes && grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold only authorization_code and refresh_token');
  }
  const responseTypes = listOf(b.response_types);
  if (responseTypes && responseTypes.some((r) => r !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may hold only code');
  let name = b.client_name;
  if (name === undefined) name = new URL(uris[0] as string).host;
  if (typeof name !== 'string' || name.trim() === '' || name.length > CLIENT_NAME_MAX || CONTROL.test(name)) {
    throw new OAuthError('invalid_client_metadata', `client_name must be 1-${CLIENT_NAME_MAX} characters without control characters`);
  }
  return { name: name.trim(), redirectUris: [...new Set(uris as string[])] };
}

/** A space-separated `scope` parameter as Mnemo's permission names; unknown names are refused (invalid_scope). */
export function parseScopeParam(scope: string | undefined): Permission[] | undefined {
  if (scope === undefined || scope.trim() === '') return undefined;
  const names = [...new Set(scope.trim().split(/\s+/))];
  const unknown = names.filter((n) => !isPermission(n));
  if (unknown.length > 0) throw new OAuthError('invalid_scope', `Unknown scope(s): ${unknown.join(', ')}; known: ${ALL_PERMISSIONS.join(' ')}`);
  return names as Permission[];
}

/** RFC 7636 §4.1: 43-128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: base64url of a SHA-256 digest, 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Whether `verifier` hashes (S256) to `challenge`, compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const hashed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return hashed.length === expected.length && timingSafeEqual(hashed, expected);
}

/** The scopes a grant acts with now: what it was granted and the key still holds. */
export const effectiveScopes = (granted: readonly Permission[], keyHolds: readonly Permission[]): Permission[] =>
  granted.filter((s) => keyHolds.includes(s));
