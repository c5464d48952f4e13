import type { Permission } from '../api-keys/api-key.types.ts';
import type { KeyMode } from '../scope.ts';

/** A client registered through dynamic registration (RFC 7591): public (no secret), redirect URIs fixed at registration. */
export interface OAuthClient {
  /** `mcl_…`. */
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: Date;
}

/**
 * What a person allowed on the consent page: one client acting for their key's tenant and mode, in one workspace,
 * with these scopes (never more than the key held when it was granted, and at each use no more than it holds then).
 */
export interface OAuthGrant {
  /** `ogr_…`. */
  id: string;
  clientId: string;
  tenantId: string;
  mode: KeyMode;
  workspace: string;
  /** The key the person signed in with: the grant acts as it, narrowed, and ends with it. */
  keyId: string;
  userId: string;
  scopes: Permission[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A grant as the dashboard lists it: with its client's name. */
export interface OAuthGrantView extends OAuthGrant {
  clientName: string;
}

/** An authorization code (stored as its digest only), single-use: `usedAt` and `grantId` are set when it is redeemed. */
export interface OAuthCode {
  digest: string;
  clientId: string;
  redirectUri: string;
  /** PKCE S256: base64url(SHA-256(code_verifier)). */
  codeChallenge: string;
  /** The RFC 8707 resource the client named (the MCP endpoint), or null when it named none. */
  resource: string | null;
  /** The grant it becomes: what the person chose. */
  grant: Omit<OAuthGrant, 'createdAt' | 'lastUsedAt' | 'revokedAt'>;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export type OAuthTokenKind = 'access' | 'refresh';

/** An access or refresh token (stored as its digest only). A refresh token is used once: `usedAt` marks it spent. */
export interface OAuthToken {
  digest: string;
  grantId: string;
  kind: OAuthTokenKind;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** Whose grants: a tenant and key mode, as for keys and the audit log. */
export interface OAuthOwner {
  tenantId: string;
  mode: KeyMode;
}
