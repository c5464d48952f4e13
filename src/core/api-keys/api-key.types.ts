import type { KeyMode } from '../scope.ts';

export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export const KEY_MODES: readonly KeyMode[] = ['live', 'test'];

/**
 * Scopes. The spec names the secrets-component scopes; the memory surfaces use `memories:read` / `memories:write`.
 * A key created without scopes gets all of them.
 */
export const ALL_SCOPES = [
  'memories:read',
  'memories:write',
  'secrets:read',
  'secrets:write',
  'secrets:delete',
  'apikeys:manage',
  'mcp:access',
  'audit:read',
] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  userId: string;
  tier: Tier;
  mode: KeyMode;
  scopes: Scope[];
  /** First characters of the key, safe to show (`mnemo_live_AbC1`). */
  displayPrefix: string;
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  digest: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** The authenticated caller of a request. */
export interface Principal {
  keyId: string;
  tenantId: string;
  userId: string;
  tier: Tier;
  mode: KeyMode;
  scopes: ReadonlySet<Scope>;
}
