import { DomainError } from '../../../core/errors.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * A write asked for after the store was closed (the server is shutting down): it was not made. An OVERLOADED domain
 * error, so that a straggling request gets every surface's 503 envelope (try again: another node, or this one once
 * restarted) rather than a 500.
 */
export class StoreClosedError extends DomainError {
  constructor() {
    super('OVERLOADED', 'the store is closed (shutting down): the write was not made', { retryAfterMs: 1000 });
    this.name = 'StoreClosedError';
  }
}

/** The most writes one shared transaction takes; more wait for the next one (keeps a single COMMIT's latency bounded). */
export const GROUP_COMMIT_MAX = 128;

/**
 * Group commit for single-memory writes. better-sqlite3 is synchronous, so a write that commits alone blocks the
 * event loop for its COMMIT and, under `synchronous=full`, its fsync. Writes that arrive together (in the same turn of
 * the event loop) are queued and run on the next `setImmediate` inside ONE `BEGIN IMMEDIATE … COMMIT`, so the group
 * pays one fsync.
 *
 * Each write runs in its own SAVEPOINT: better-sqlite3's `db.transaction()` functions become savepoints when a
 * transaction is already open, so a write that throws (constraint, conflict) is rolled back alone and its caller gets
 * its own error; the others stay. Callers are resolved only AFTER the shared COMMIT returned, so an acknowledged write
 * is exactly as durable as one committed alone. If the COMMIT itself fails, the group is rolled back and every write
 * of it is rejected with that error.
 *
 * Callers are resolved in submission order, all in the same microtask run after the COMMIT, so their post-commit steps
 * (in-memory indexes, event listeners, written after their `await`) run in that order before any other I/O callback:
 * a read issued after the await sees the write.
 *
 * `close()` (graceful shutdown) commits what is still queued, as a caller whose write was accepted expects, and
 * refuses writes asked for afterwards with StoreClosedError instead of SQLite's "connection is not open".
 */
export class SqliteGroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  /** Transactions committed by groups, and writes acknowledged through them (metrics and tests). */
  readonly stats = { commits: 0, writes: 0, failedCommits: 0 };

  constructor(private readonly db: SqliteDb, private readonly max = GROUP_COMMIT_MAX) {}

  /** Queues `work` (synchronous SQL, usually a `db.transaction()` function) for the next group; resolves after COMMIT. */
  run<T>(work: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (this.queue.length >= this.max) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Commits every queued write now (a write that fails still rejects alone, as in any group) and refuses later ones.
   * Synchronous: call it before the connection closes.
   */
  close(): void {
    this.closed = true;
    while (this.queue.length > 0) this.flush();
  }

  /** Runs every queued write in one transaction. Synchronous: nothing else touches the connection meanwhile. */
  flush(): void {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    if (this.db.inTransaction) {
      // Someone else's transaction is open on this connection (cannot happen between ticks; guard anyway): run each
      // write as it would have run alone, inside that transaction's savepoints.
      for (const p of group) settleAlone(p);
      return;
    }
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    const done: { p: Pending; value: unknown }[] = [];
    const failed: { p: Pending; err: unknown }[] = [];
    for (const p of group) {
      this.db.exec('SAVEPOINT group_write');
      try {
        const value = p.work();
        this.db.exec('RELEASE group_write');
        done.push({ p, value });
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK TO group_write; RELEASE group_write');
        failed.push({ p, err });
        if (!this.db.inTransaction) {
          // SQLite rolled the whole transaction back (e.g. SQLITE_FULL): nothing of the group is left to commit.
          for (const d of done) failed.push({ p: d.p, err });
          done.length = 0;
          for (const rest of group.slice(group.indexOf(p) + 1)) this.queue.push(rest);
          break;
        }
      }
    }
    try {
      if (this.db.inTransaction) this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.stats.failedCommits++;
      for (const d of done) d.p.reject(err);
      for (const f of failed) f.p.reject(f.err);
      this.rescheduleLeftovers();
      return;
    }
    if (done.length > 0) {
      this.stats.commits++;
      this.stats.writes += done.length;
    }
    for (const d of done) d.p.resolve(d.value);
    for (const f of failed) f.p.reject(f.err);
    this.rescheduleLeftovers();
  }

  private rescheduleLeftovers(): void {
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}

function settleAlone(p: Pending): void {
  try {
    p.resolve(p.work());
  } catch (err) {
    p.reject(err);
  }
}
