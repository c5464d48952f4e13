import type { StoredEvent } from '../../core/events/event.types.ts';

/**
 * Who hears about appended events in this process (streams, the delivery worker), told only after the appending
 * transaction committed. Shared by every adapter's outbox.
 */
export class CommitListeners {
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();

  /** After the commit: wake streams and the delivery worker of this process. */
  notify(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch {
        // A listener's failure must not fail the write that already committed.
      }
    }
  }

  onAppended(listener: (events: readonly StoredEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
