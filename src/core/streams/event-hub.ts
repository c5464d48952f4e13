import type { EventRepository } from '../events/event.repository.ts';
import type { StoredEvent } from '../events/event.types.ts';
import type { KeyMode } from '../scope.ts';

/** Which part of the log a subscriber follows (the same visibility rules as EventRepository.readAfter). */
export interface TailScope {
  tenantId: string;
  mode: KeyMode;
  workspace: string;
  /** Event types wanted; never empty. */
  types: readonly string[];
}

export interface TailOptions extends TailScope {
  /**
   * Where to start: events with a greater seq are delivered (resume after a known event). Undefined: from now (the
   * log's latest seq when the subscription starts).
   */
  afterSeq?: number | undefined;
  /**
   * Receives events in log order, at most one page at a time, never concurrently. Returning false stops the
   * subscription (e.g. the connection closed or hit a limit).
   */
  deliver(events: readonly StoredEvent[]): Promise<boolean | void> | boolean | void;
  /** A read or delivery failed; the subscription has stopped. */
  onError?(error: unknown): void;
}

export interface Tail {
  /** The seq of the last event handed to `deliver` (or skipped over by the scope query). */
  readonly cursor: number;
  stop(): void;
}

export type EventHub = ReturnType<typeof createEventHub>;

/** Events per read. */
const PAGE = 200;
/** Seqs per read: one read scans at most this stretch of the log, whoever's events it holds. */
const WINDOW = 2000;

/** A macrotask turn: other requests' I/O and timers run between two reads of a long catch-up. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether an event of this batch could concern the subscriber (its scope and types), to skip useless reads. */
function mayConcern(s: TailScope, e: StoredEvent): boolean {
  if (!s.types.includes(e.type)) return false;
  if (e.scope.tenantId === null) return true;
  if (e.scope.tenantId !== s.tenantId || e.scope.mode !== s.mode) return false;
  return e.scope.workspace === null || e.scope.workspace === s.workspace;
}

/**
 * The event fan-in: every subscriber tails the event log from its own cursor with `readAfter`, so a stream sees
 * exactly the log (nothing missed, nothing twice, in order) however events arrive. Subscribers are woken
 * - by `onAppended` after each commit of this process (only those the new events may concern), and
 * - by a poll of `latestSeq` every `pollMs`, which catches writes of other processes on the same database (the CLI,
 *   another node); a gap in the seqs this process heard about wakes everyone at once too;
 * - by `nudge`, when another node announces its appends (MNEMO_REDIS_URL), so its writes arrive without the poll's delay.
 */
export function createEventHub(deps: { events: Pick<EventRepository, 'readAfter' | 'latestSeq' | 'onAppended' | 'findById'>; pollMs: number }) {
  const { events } = deps;
  const subscribers = new Set<Subscriber>();
  /** The highest seq this hub knows of. */
  let known = 0;
  let unlisten: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  let polling = false;
  let pollAgain = false;
  let closed = false;

  class Subscriber implements Tail {
    cursor = 0;
    private ready = false;
    private running = false;
    private dirty = false;
    private stopped = false;
    constructor(readonly options: TailOptions) {}

    start(from: number): void {
      this.cursor = from;
      this.ready = true;
      this.wake();
    }

    wake(): void {
      if (this.stopped) return;
      if (!this.ready || this.running) {
        this.dirty = true;
        return;
      }
      void this.pump();
    }

    /**
     * Catches up to the log's latest seq in bounded reads (at most PAGE events out of at most WINDOW seqs each),
     * yielding to the event loop between two reads: a stream far behind (a resume, a slow client) never holds the
     * loop, however many of the events its scope or its filters drop.
     */
    private async pump(): Promise<void> {
      this.running = true;
      try {
        do {
          this.dirty = false;
          // Every event up to latestSeq is visible (the order guarantee), so a window read below it is final. Not the
          // hub's `known`: a commit of this process may be ahead of another node's smaller seq still in flight.
          const end = await events.latestSeq();
          while (this.cursor < end && !this.stopped) {
            const o = this.options;
            const upto = Math.min(this.cursor + WINDOW, end);
            const page = await events.readAfter({
              tenantId: o.tenantId, mode: o.mode, workspace: o.workspace, types: o.types, afterSeq: this.cursor, uptoSeq: upto, limit: PAGE,
            });
            if (this.stopped) break;
            if (page.length > 0) {
              const goOn = await o.deliver(page);
              this.cursor = page[page.length - 1]!.seq;
              if (goOn === false) {
                this.stop();
                return;
              }
              if (this.stopped) break;
            }
            // A page short of PAGE holds every event of the window this subscriber may see.
            if (page.length < PAGE) this.cursor = upto;
            if (this.cursor < end) await yieldToLoop();
          }
        } while (this.dirty && !this.stopped);
      } catch (err) {
        this.stop();
        this.options.onError?.(err);
      } finally {
        this.running = false;
      }
    }

    stop(): void {
      if (this.stopped) return;
      this.stopped = true;
      subscribers.delete(this);
      if (subscribers.size === 0) idle();
    }
  }

  function heard(batch: readonly StoredEvent[]): void {
    if (batch.length === 0) return;
    const first = batch[0]!.seq;
    const last = batch[batch.length - 1]!.seq;
    // Seqs we never heard of were written by another process: everyone may need them.
    const gap = known > 0 && first > known + 1;
    known = Math.max(known, last);
    for (const s of subscribers) {
      if (gap || batch.some((e) => mayConcern(s.options, e))) s.wake();
    }
  }

  async function poll(): Promise<void> {
    if (closed) return;
    if (polling) {
      // A nudge during a poll may announce a commit that poll read too early to see: look once more after it.
      pollAgain = true;
      return;
    }
    polling = true;
    try {
      do {
        pollAgain = false;
        const latest = await events.latestSeq();
        if (latest > known) {
          known = latest;
          for (const s of subscribers) s.wake();
        }
      } while (pollAgain && !closed);
    } catch {
      // The store is closing or briefly unavailable: the next poll tries again.
    } finally {
      polling = false;
    }
  }

  function active(): void {
    if (unlisten === null) unlisten = events.onAppended(heard);
    if (timer === null) {
      timer = setInterval(() => void poll(), deps.pollMs);
      timer.unref();
    }
  }

  function idle(): void {
    unlisten?.();
    unlisten = null;
    if (timer !== null) clearInterval(timer);
    timer = null;
  }

  return {
    /**
     * Starts tailing. The subscriber is registered before its starting point is read, so an event committed while
     * it starts is either before the start (from now) or delivered — never lost between the two.
     */
    async subscribe(options: TailOptions): Promise<Tail> {
      if (closed) throw new Error('event hub is closed');
      if (options.types.length === 0) throw new Error('a tail needs at least one event type');
      const s = new Subscriber(options);
      subscribers.add(s);
      active();
      try {
        const latest = await events.latestSeq();
        known = Math.max(known, latest);
        s.start(options.afterSeq ?? latest);
      } catch (err) {
        s.stop();
        throw err;
      }
      return s;
    },

    get size(): number {
      return subscribers.size;
    },

    /** Another node says it appended events: look now rather than at the next poll. */
    nudge(): void {
      if (subscribers.size > 0) void poll();
    },

    /** The log's end now: a tail started after it sees only what comes next. */
    latestSeq: (): Promise<number> => events.latestSeq(),

    /**
     * Where a stream resumes after the event `eventId`: its seq, when the event is one the caller may see (its
     * tenant and mode, or system-wide); null otherwise, so no other tenant's event ever serves as a resume point.
     */
    async resumePoint(eventId: string, caller: { tenantId: string; mode: KeyMode }): Promise<{ seq: number; eventId: string } | null> {
      const e = await events.findById(eventId);
      if (!e) return null;
      if (e.scope.tenantId !== null && (e.scope.tenantId !== caller.tenantId || e.scope.mode !== caller.mode)) return null;
      return { seq: e.seq, eventId: e.id };
    },

    close(): void {
      closed = true;
      for (const s of [...subscribers]) s.stop();
      idle();
    },
  };
}
