import type { KeyMode } from '../scope.ts';
import type { SealedRef, SealedValue } from '../secrets/secret.types.ts';

/**
 * Which request an `Idempotency-Key` names on G11: keys belong to the API key that sent them (within its tenant and
 * mode), so a replay never hands one key's answer (a secret's value, a new API key) to another key, which may hold
 * fewer scopes (idempotent-request.service.ts).
 */
export interface IdempotentRequestRef {
  tenantId: string;
  mode: KeyMode;
  /** The caller's API key record (`key_…`). */
  apiKeyId: string;
  /** The client's `Idempotency-Key`. */
  key: string;
}

/** A new reservation of a key: written before the request runs, so that a second request with the key waits its turn. */
export interface IdempotentReservation {
  /** Random, unique to this reservation: only it completes or releases the row, and it is part of the sealed context. */
  reservation: string;
  at: Date;
  /** While this is in the future the reservation holds the key; afterwards (its request crashed) another may take it. */
  lockedUntil: Date;
  /** A record created before this is expired: it is replaced as if it were absent. */
  notBefore: Date;
}

export type ReserveOutcome =
  /** The key is this request's now: run it, then complete (or release) the reservation. */
  | { kind: 'reserved' }
  /** Another request holds the key and has not answered yet. */
  | { kind: 'in_progress' }
  /** The key was answered already: the sealed record (request fingerprint and answer) of reservation `reservation`. */
  | { kind: 'completed'; reservation: string; createdAt: Date; sealed: SealedValue };

/**
 * Storage port of G11 idempotent requests: a row per key, first a reservation (no answer), then the answer, sealed.
 * Storage never opens a sealed value. Every call names one key of one caller; nothing is listed per tenant.
 */
export interface IdempotentRequestRepository {
  /**
   * Atomically: when the key has no row, or one created before `notBefore` (expired), or a reservation whose
   * `lockedUntil` has passed (its request died), writes this reservation in its place (created `at`) and answers
   * `reserved`; otherwise writes nothing. Of callers racing on one key (any connection, any process), one reserves.
   */
  reserve(ref: IdempotentRequestRef, reservation: IdempotentReservation): Promise<ReserveOutcome>;
  /** Stores the sealed record on the key's row while it is still `reservation`'s pending reservation; false otherwise. */
  complete(ref: IdempotentRequestRef, reservation: string, sealed: SealedValue): Promise<boolean>;
  /** Removes the key's row while it is still `reservation`'s pending reservation (the key is free again); false otherwise. */
  release(ref: IdempotentRequestRef, reservation: string): Promise<boolean>;
  /** Drops rows created before `olderThan`, answered or not; returns how many. */
  prune(olderThan: Date): Promise<number>;
  /**
   * Every stored record of every caller, `limit` at a time after `after` (null: from the start), in a stable order,
   * for master-key rotation; `context` is idempotentRecordContext of the row.
   */
  sealedValues(after: string | null, limit: number): Promise<SealedRef[]>;
  /** Replaces the sealed record `ref` (same payload, data key re-wrapped), unless the row was replaced meanwhile. */
  rewrap(ref: string, sealed: SealedValue): Promise<void>;
}

/**
 * The AAD parts a record is sealed with: the key's owner, the key and the reservation, so a record moved to another
 * caller's key, or restored over a later answer of the same key, does not open.
 */
export const idempotentRecordContext = (ref: IdempotentRequestRef, reservation: string): string[] =>
  ['idempotent-request', ref.tenantId, ref.mode, ref.apiKeyId, ref.key, reservation];
