import type { KeyMode } from '../scope.ts';

/**
 * Whose secrets: G11 secrets belong to a tenant and a key mode (a `mnemo_test_` key sees its own sandbox set).
 * Workspaces do not apply to the secrets component.
 */
export interface SecretOwner {
  tenantId: string;
  mode: KeyMode;
}

/**
 * A value encrypted at rest (core/secrets/envelope.ts): AES-256-GCM under a fresh data key, and that data key
 * wrapped (AES-256-GCM) by the master key `keyId`. Both are opaque base64 strings to storage.
 */
export interface SealedValue {
  /** Which master key wrapped the data key (the keyring's id). */
  keyId: string;
  /** base64(nonce 12 ‖ encrypted data key 32 ‖ tag 16). */
  wrappedKey: string;
  /** base64(nonce 12 ‖ ciphertext ‖ tag 16). */
  payload: string;
}

/** A named secret without its value: what storage keeps beside the versions, and what lists show. */
export interface StoredSecret {
  /** `sec_…`; stable across versions. */
  id: string;
  owner: SecretOwner;
  name: string;
  tags: string[];
  /** The newest version's number (1 on creation). */
  version: number;
  createdAt: Date;
  updatedAt: Date;
  /** After this instant the secret is never returned; null: no expiry. */
  expiresAt: Date | null;
  /** `X-Region` of the last write, when the caller sent one. */
  region: string | null;
  createdBy: string;
  updatedBy: string;
}

/** One version's sealed value. */
export interface StoredSecretVersion {
  version: number;
  sealed: SealedValue;
  createdAt: Date;
  createdBy: string;
}

/** The fields a new version may change besides the value. */
export interface SecretVersionChanges {
  tags: string[];
  expiresAt: Date | null;
  region: string | null;
  updatedAt: Date;
  updatedBy: string;
}

export interface SecretListQuery {
  /** Secrets carrying any of these tags; empty: all. */
  tagsAny: string[];
  /** Secrets whose last write named this region (`X-Region`), exactly; absent: any region, or none. */
  region?: string;
  limit: number;
  /** Names after this one (names ascend in byte order): the cursor of the previous page. */
  afterName: string | null;
  /** Secrets whose expiresAt is at or before this instant are left out (and not counted). */
  now: Date;
}

/** A sealed value somewhere in the store, for master-key rotation (re-wrapping data keys). */
export interface SealedRef {
  /** Opaque to the caller; hands the value back to `rewrap`. */
  ref: string;
  /** What the value's encryption is bound to (its AAD parts, core/secrets/envelope.ts). */
  context: string[];
  sealed: SealedValue;
}

/** The AAD parts a secret version's value is sealed with: tenant, mode, name and version (a row moved elsewhere fails). */
export const secretVersionContext = (owner: SecretOwner, name: string, version: number): string[] =>
  ['secret', owner.tenantId, owner.mode, name, String(version)];

/** The AAD parts of a master key's check value. */
export const keyCheckContext = (keyId: string): string[] => ['master-key-check', keyId];
