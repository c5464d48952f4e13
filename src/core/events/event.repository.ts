import type { KeyMode } from '../scope.ts';
import type { NewEvent, StoredEvent } from './event.types.ts';

export interface EventQuery {
  tenantId: string;
  mode: KeyMode;
  /** Only this workspace's memory events (events without a workspace — G10, system — are still included). */
  workspace: string | null;
  afterSeq: number;
  /**
   * Only events with a seq up to this one (inclusive): bounds the rows one read may scan, however few of them the
   * caller may see, so a reader far behind walks the log window by window. Undefined: no upper bound.
   */
  uptoSeq?: number | undefined;
  types?: readonly string[] | undefined;
  limit: number;
}

/**
 * The event log (transactional outbox). Writes that change memories append their events in the same transaction
 * through the memory repository; this port appends the rest (searches, system and producer events) and reads the
 * log. Appending also stores, in the same transaction, the deliveries the core decides on: for each event the adapter
 * reads the candidate webhooks `fanOutCandidates` names and writes the rows `fanOut` returns
 * (core/webhooks/fan-out.ts).
 *
 * **Order guarantee.** Sequence numbers grow, and become visible in sequence order: `readAfter` never returns an
 * event with seq S while an event with a smaller seq may still become visible, and `latestSeq` never exceeds such a
 * pending seq. Readers (G8 resume, the live streams, the event hub) therefore see a prefix of the log without holes
 * and can keep a bare seq as their cursor. Numbers need not be consecutive (a rolled-back append may burn some).
 * SQLite keeps this trivially (one writer at a time); a store with concurrent writers must serialise the assignment
 * of seqs with the commit, or hold readers below the oldest seq still in flight (docs/architecture.md, "Events").
 */
export interface EventRepository {
  append(events: readonly NewEvent[]): Promise<StoredEvent[]>;
  /** Events visible to a caller, oldest first, after a sequence number (resume); see the order guarantee. */
  readAfter(query: EventQuery): Promise<StoredEvent[]>;
  findById(id: string): Promise<StoredEvent | null>;
  /** The highest seq every reader may pass: all events up to it are visible (see the order guarantee). */
  latestSeq(): Promise<number>;
  /** Drops events older than the retention window; returns how many. */
  prune(olderThan: Date): Promise<number>;
  /** Called after every commit of this process that appended events (wakes streams and the delivery worker). */
  onAppended(listener: (events: readonly StoredEvent[]) => void): () => void;
}
