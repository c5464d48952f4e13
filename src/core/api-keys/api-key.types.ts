import type { KeyMode } from '../scope.ts';

/** Lowest first: a key may grant a tier no higher than its own (api-key.rules.ts). */
export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export const KEY_MODES: readonly KeyMode[] = ['live', 'test'];

/**
 * Permissions a key holds (the wire calls them `scopes`, as the spec does). The spec names the secrets component's;
 * the memory surfaces use `memories:read` / `memories:write`, and `memories:forget` for forgetting by filter (many
 * memories at once: `POST /api/v1/memories/forget`, MCP memory_forget). A key created without any gets
 * DEFAULT_PERMISSIONS. (Not core/scope.ts's Scope, which is where data lives: tenant, mode and workspace.)
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
  'memories:forget',
  /** Ingestions of the key write without a person's review (policy `auto`, docs/ingestion.md). */
  'memories:auto_ingest',
] as const;
export type Permission = (typeof ALL_PERMISSIONS)[number];

/**
 * Permissions granted only when asked for by name: a key created without scopes does not get them. Forgetting by
 * filter erases at once what a filter matches, beyond undo, and auto-ingestion writes what a model proposed with no
 * person's review: a key gets such power when someone chose to give it, and the keys made as before (the spec's
 * callers) hold and answer exactly the scopes they did.
 */
export const OPT_IN_PERMISSIONS: readonly Permission[] = ['memories:forget', 'memories:auto_ingest'];

/** What a key created without scopes gets: every permission but the opt-in ones. */
export const DEFAULT_PERMISSIONS: readonly Permission[] = ALL_PERMISSIONS.filter((p) => !OPT_IN_PERMISSIONS.includes(p));

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
