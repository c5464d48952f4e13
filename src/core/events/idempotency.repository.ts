import type { KeyMode } from '../scope.ts';
import type { NewEvent, StoredEvent } from './event.types.ts';

/** Which request an `Idempotency-Key` names: keys are per tenant and mode. */
export interface IdempotencyKeyRef {
  tenantId: string;
  mode: KeyMode;
  key: string;
}

/** The first answer to a key: a digest of its request, and the answer itself (opaque JSON text). */
export interface IdempotencyRecord {
  requestHash: string;
  response: string;
  createdAt: Date;
}

export interface IdempotentWrite {
  requestHash: string;
  response: string;
  at: Date;
  /** A record created before this is expired: it is replaced as if it were absent. */
  notBefore: Date;
}

export type AppendOnceResult =
  | { kind: 'appended'; events: StoredEvent[] }
  | { kind: 'existing'; record: IdempotencyRecord };

/** Storage port for answered producer requests (`POST /v1/events` with `Idempotency-Key`). */
export interface IdempotencyRepository {
  /**
   * In one transaction: when the key already has a live record, returns it and writes nothing; otherwise stores the
   * record and appends the events (with their webhook deliveries, as `EventRepository.append`). A crash leaves both
   * or neither, and two racing requests with one key append the events once.
   */
  appendEventOnce(ref: IdempotencyKeyRef, write: IdempotentWrite, events: readonly NewEvent[]): Promise<AppendOnceResult>;
  /** Drops records created before `olderThan`; returns how many. */
  prune(olderThan: Date): Promise<number>;
}
