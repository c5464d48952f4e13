import type { EventRepository } from '../events/event.repository.ts';
import { searchPerformed } from '../events/memory-events.ts';
import { sameScope, type Scope } from '../scope.ts';
import type { WarningLog } from '../warning-log.ts';
import type { SearchLogEntry, SearchLogRepository } from './search-log.ts';

/**
 * How long a recorded search waits for others to share its write; a full batch is written at once. Each batch costs two
 * commits (two fsyncs on the event loop under SQLite's synchronous=FULL); 100 ms bounds them to 20 per second, so a
 * busy server's event loop (and /health behind it) does not wait on them (docs/architecture.md, "The search log").
 */
export const SEARCH_RECORD_DELAY_MS = 100;
export const SEARCH_RECORD_MAX_BATCH = 256;

export interface SearchRecorder {
  /** Queues one search's log entry and its `search.performed` event; returns at once. */
  record(entry: SearchLogEntry): void;
  /** Writes everything queued so far (and waits for a write under way). */
  flush(): Promise<void>;
  /**
   * What a reader of one scope needs: everything queued is written when a search of that scope waits in the queue;
   * otherwise only the write under way is waited for (a reader of a quiet scope costs no commit of its own).
   */
  flushFor(scope: Scope): Promise<void>;
}

/**
 * Writes the search log and the `search.performed` events off the search's critical path, in batches: a search's
 * answer no longer waits for two commits (each an fsync under `synchronous=FULL`), and searches finishing close
 * together share one transaction for their log rows and one for their events. Durability: search-log rows are
 * analytics, not user data — a crash loses at most the last SEARCH_RECORD_DELAY_MS of them. The events still go
 * through the outbox (their webhooks are delivered as before), written within that delay; readers of the log
 * (suggestions, analytics) and shutdown call flush() first, so they see every search answered before.
 */
export function createSearchRecorder(deps: {
  searchLog: Pick<SearchLogRepository, 'appendMany'>;
  events: Pick<EventRepository, 'append'>;
  warnings?: WarningLog | undefined;
  delayMs?: number | undefined;
  maxBatch?: number | undefined;
}): SearchRecorder {
  const delayMs = deps.delayMs ?? SEARCH_RECORD_DELAY_MS;
  const maxBatch = deps.maxBatch ?? SEARCH_RECORD_MAX_BATCH;
  let queue: SearchLogEntry[] = [];
  let timer: NodeJS.Timeout | null = null;
  /** The write under way; writes run one at a time, in the order the searches were recorded. */
  let writing: Promise<void> = Promise.resolve();

  const write = (batch: SearchLogEntry[]): Promise<void> => {
    writing = writing.then(async () => {
      // The events first and on their own: their webhooks are owed to users, while the log rows are analytics, so a
      // failing log write must not take the events with it.
      try {
        await deps.events.append(batch.map((entry) => searchPerformed(entry)));
      } catch (err) {
        deps.warnings?.warn({ err, searches: batch.length }, 'could not record search.performed events in the event outbox');
      }
      try {
        await deps.searchLog.appendMany(batch);
      } catch (err) {
        deps.warnings?.warn({ err, searches: batch.length }, 'could not record searches in the search log');
      }
    });
    return writing;
  };

  const drain = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (queue.length === 0) return writing;
    const batch = queue;
    queue = [];
    return write(batch);
  };

  return {
    record(entry) {
      queue.push(entry);
      if (queue.length >= maxBatch) void drain();
      else if (!timer) {
        timer = setTimeout(() => { void drain(); }, delayMs);
        timer.unref();
      }
    },
    flush: drain,
    flushFor(scope) {
      return queue.some((e) => sameScope(e.scope, scope)) ? drain() : writing;
    },
  };
}

/**
 * `reader` with each method waiting for `flush` first: for readers of the search log and the `search.performed`
 * events (usage, analytics), which must count the searches answered before they were asked.
 */
export function afterFlush<T extends object>(reader: T, flush: () => Promise<void>): T {
  return new Proxy(reader, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await flush();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
