import type { KeyMode } from '../scope.ts';
import type { NewEvent, StoredEvent } from './event.types.ts';

export interface EventQuery {
  tenantId: string;
  mode: KeyMode;
  /** Only this workspace's memory events (events without a workspace — G10, system — are still included). */
  workspace: string | null;
  afterSeq: number;
  types?: readonly string[] | undefined;
  limit: number;
}

/**
 * The event log (transactional outbox). Writes that change memories append their events in the same transaction
 * through the memory repository; this port appends the rest (searches, system and producer events) and reads the
 * log. Appending also fans each event out to the deliveries of the webhooks that want it, in the same transaction.
 */
export interface EventRepository {
  append(events: readonly NewEvent[]): Promise<StoredEvent[]>;
  /** Events visible to a caller, oldest first, after a sequence number (resume). */
  readAfter(query: EventQuery): Promise<StoredEvent[]>;
  findById(id: string): Promise<StoredEvent | null>;
  latestSeq(): Promise<number>;
  /** Drops events older than the retention window; returns how many. */
  prune(olderThan: Date): Promise<number>;
  /** Called after every commit of this process that appended events (wakes streams and the delivery worker). */
  onAppended(listener: (events: readonly StoredEvent[]) => void): () => void;
}
