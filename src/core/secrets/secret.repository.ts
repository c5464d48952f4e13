import { DomainError } from '../errors.ts';
import type { NewEvent } from '../events/event.types.ts';
import type {
  SealedRef, SealedValue, SecretListQuery, SecretOwner, SecretVersionChanges, StoredSecret, StoredSecretVersion,
} from './secret.types.ts';

/** What an adapter throws when the owner already has a secret of that name. */
export const duplicateSecretName = (name: string): DomainError => new DomainError('CONFLICT', `A secret named ${name} already exists`, {
  fields: [{ field: 'name', reason: 'conflict', message: 'already used by another secret' }],
});
/** What an adapter throws when `addVersion` lost the race for the next version number. */
export const staleSecretVersion = (name: string, expected: number): DomainError =>
  new DomainError('CONFLICT', `Secret ${name} changed after version ${expected}: another write won; read it and try again`);

/** `sealedValues` refs: a secret version's primary key, `secret_id:version` (the version is digits, so the last `:` splits). */
export const secretVersionRef = (secretId: string, version: number): string => `${secretId}:${version}`;
export function parseSecretVersionRef(ref: string): [string, number] {
  const at = ref.lastIndexOf(':');
  const version = Number(ref.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(version) || String(version) !== ref.slice(at + 1)) throw new Error(`not a sealed value ref: ${ref}`);
  return [ref.slice(0, at), version];
}

/** How many versions of a secret are kept at least (the spec's history; older ones are pruned on write). */
export const SECRET_VERSIONS_KEPT = 10;

/**
 * Storage port of the secrets component. Only sealed values reach storage; every read and write is scoped to one
 * owner (tenant + mode), and another owner's secret answers exactly like a missing one.
 */
export interface SecretRepository {
  /**
   * A new secret with its version 1, and `events` appended to the event log (with their webhook deliveries, as
   * EventRepository.append stores them) in the same transaction. Throws DomainError CONFLICT, writing nothing, when
   * the owner already has a secret of that name.
   */
  create(secret: StoredSecret, first: StoredSecretVersion, events?: readonly NewEvent[]): Promise<void>;
  /** The secret and one of its versions (`version` absent: the newest); null when either does not exist. */
  find(owner: SecretOwner, name: string, version?: number): Promise<{ secret: StoredSecret; version: StoredSecretVersion } | null>;
  /**
   * Adds version `expected + 1` and applies `changes`, in one transaction, when the secret's newest version is still
   * `expected` (else DomainError CONFLICT: another write won); then prunes all but the newest `keep` versions.
   * Returns the secret as stored, or null when the owner has no such secret.
   */
  addVersion(owner: SecretOwner, name: string, expected: number, next: StoredSecretVersion, changes: SecretVersionChanges, keep: number):
    Promise<StoredSecret | null>;
  /** Deletes the secret and all its versions; false when there was none. */
  delete(owner: SecretOwner, name: string): Promise<boolean>;
  /** Names ascending; `total` counts every secret matching the query (all pages). */
  list(owner: SecretOwner, query: SecretListQuery): Promise<{ items: StoredSecret[]; total: number }>;
  /**
   * Every sealed value of every owner, `limit` at a time after `after` (null: from the start), for master-key rotation:
   * the kept versions of every secret (expired ones too), in a stable order (by secret id, then version). The key-check
   * values are not among them: each stays sealed under its own key.
   */
  sealedValues(after: string | null, limit: number): Promise<SealedRef[]>;
  /** Replaces the sealed value `ref` (same payload, data key re-wrapped under another master key). */
  rewrap(ref: string, sealed: SealedValue): Promise<void>;
  /** The check value sealed under master key `keyId` at first use, which proves a key is the right one; null if none. */
  keyCheck(keyId: string): Promise<SealedValue | null>;
  /** The ids of every master key with a stored check value: each key that was the active one of a server on this store. */
  keyCheckIds(): Promise<string[]>;
  /** Stores the check value of master key `keyId` unless one is already stored (then keeps the stored one). */
  putKeyCheck(keyId: string, sealed: SealedValue): Promise<void>;
  /**
   * Forgets master key `keyId`'s check value, once rotation has re-wrapped everything it sealed: a server no longer
   * needs that key to start. False when there was none.
   */
  deleteKeyCheck(keyId: string): Promise<boolean>;
}
