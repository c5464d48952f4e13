import type { KeyMode } from '../scope.ts';

/** Lowest first: a key may grant a tier no higher than its own (api-key.rules.ts). */
export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export const KEY_MODES: readonly KeyMode[] = ['live', 'test'];

/**
 * Permissions a key holds (the wire calls them `scopes`, as the spec does). The spec names the secrets component's;
 * the memory surfaces use `memories:read` / `memories:write`. A key created without any gets all of them. (Not
 * core/scope.ts's Scope, which is where data lives: tenant, mode and workspace.)
 */
export const ALL_PERMISSIONS = [
  'memories:read',
  'memories:write',
  'secrets:read',
  'secrets:write',
  'secrets:delete',
  'apikeys:manage',
  'mcp:access',
  'audit:read',
] as const;
export type Permission = (typeof ALL_PERMISSIONS)[number];

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  userId: string;
  /** A label for people (1-100 characters); keys made before names existed are called "API key". */
  name: string;
  tier: Tier;
  mode: KeyMode;
  scopes: Permission[];
  /** First characters of the key, safe to show (`mnemo_live_AbC1`). */
  displayPrefix: string;
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  digest: string;
  createdAt: Date;
  /** The key stops working at this instant; a rotated key's is the end of its grace period. */
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The id of the key that replaced this one by rotation; null until it is rotated (a key is rotated once). */
  replacedBy: string | null;
}

/** Whose keys: a key manages the keys of its own tenant and mode only (a `mnemo_test_` key, the sandbox's). */
export interface ApiKeyOwner {
  tenantId: string;
  mode: KeyMode;
}

/** A page of an owner's keys, oldest first: `after` is the last key of the previous page (null: the first page). */
export interface ApiKeyListQuery {
  limit: number;
  after: { createdAt: Date; id: string } | null;
}

/** What an update may change: absent fields stay. */
export interface ApiKeyChanges {
  name?: string;
  scopes?: Permission[];
}

/** The authenticated caller of a request. */
export interface Principal {
  keyId: string;
  tenantId: string;
  userId: string;
  tier: Tier;
  mode: KeyMode;
  scopes: ReadonlySet<Permission>;
  /** When the key stops working (null: never); keys it creates may not outlive it. */
  expiresAt: Date | null;
}
