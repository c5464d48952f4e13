import type { AnalyticsSummary, AnalyticsSummaryService } from '../analytics/summary.ts';
import type { UsageRepository } from '../analytics/usage.repository.ts';
import { isoTimestamp, type Clock } from '../clock.ts';
import type { Claims } from '../coordination/claims.port.ts';
import type { KeyMode } from '../scope.ts';
import type { EventRepository } from './event.repository.ts';
import { SYSTEM_SCOPE, type NewEvent } from './event.types.ts';
import { newEventId } from './memory-events.ts';

/** What the process can tell about itself: CPU time used so far (µs) and resident memory (bytes). */
export interface ProcessSample { cpuMicros: number; rssBytes: number }

export interface HealthMetrics {
  /** CPU time of this process over the last interval, as a percentage of one core. */
  cpu_usage: number;
  /** Resident set size, MiB. */
  memory_usage: number;
  /** How long a storage ping took, ms. */
  response_time: number;
  /** Share of requests answered 5xx over the last interval, 0..1. */
  error_rate: number;
}

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export function systemHealth(at: Date, status: HealthStatus, metrics: HealthMetrics, databaseUp: boolean): NewEvent {
  return {
    id: newEventId(), type: 'system.health', scope: { ...SYSTEM_SCOPE }, createdAt: at,
    data: {
      status, timestamp: isoTimestamp(at), metrics,
      services: { api: 'up', database: databaseUp ? 'up' : 'down', search: 'up' },
    },
  };
}

/** Per tenant + mode (no workspace: it reaches every workspace's streams of that tenant and mode). */
export function analyticsUpdate(tenantId: string, mode: KeyMode, at: Date, summary: AnalyticsSummary): NewEvent {
  return {
    id: newEventId(), type: 'analytics.update', scope: { tenantId, mode, workspace: null }, createdAt: at,
    data: { ...summary, timestamp: isoTimestamp(at) },
  };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

export type PeriodicEvents = ReturnType<typeof createPeriodicEvents>;

/**
 * The timers of the event log: `system.health` every `healthIntervalMs` (system-wide), `analytics.update` every
 * `analyticsIntervalMs` for each tenant + mode that had events in that interval, and pruning of events older than
 * the retention window. Started by the server process (not by the CLI); each emitter can also be run by hand.
 */
export function createPeriodicEvents(deps: {
  events: Pick<EventRepository, 'append' | 'prune'>;
  usage: Pick<UsageRepository, 'activeScopes'>;
  summary: AnalyticsSummaryService;
  ping: () => Promise<boolean>;
  sampleProcess: () => ProcessSample;
  clock: Clock;
  healthIntervalMs: number;
  analyticsIntervalMs: number;
  retentionMs: number;
  pruneIntervalMs: number;
  /** Also pruned at each pruning tick: request measurements older than their own retention (90 days). */
  requestMetrics?: { prune(before: Date): Promise<number>; retentionMs: number } | undefined;
  /** Also pruned at each pruning tick: ingestion jobs finished longer ago than their retention (MNEMO_INGEST_RETENTION_HOURS). */
  ingestions?: { pruneFinished(before: Date): Promise<number>; retentionMs: number } | undefined;
  /** Also pruned at each pruning tick: OAuth codes and tokens past their expiry (core/oauth). */
  oauth?: { pruneExpired(before: Date): Promise<number> } | undefined;
  /**
   * With several nodes, each timer's tick runs on the node that claims it for the interval (the others skip it),
   * so an event fires once per cluster. Absent: every tick runs here (one node).
   */
  claims?: Claims;
  /** Failures of a timer's work (the store closing, …): logged by the caller, never thrown. */
  onError?: (what: string, error: unknown) => void;
}) {
  const timers: NodeJS.Timeout[] = [];
  let reportError = deps.onError;
  let lastSample = { at: performance.now(), cpu: deps.sampleProcess().cpuMicros };
  let requests = 0;
  let failures = 0;

  async function emitHealth(): Promise<NewEvent> {
    const started = performance.now();
    const databaseUp = await deps.ping().catch(() => false);
    const responseTime = performance.now() - started;
    const sample = deps.sampleProcess();
    const now = performance.now();
    const elapsedMs = Math.max(1, now - lastSample.at);
    const cpu = Math.max(0, ((sample.cpuMicros - lastSample.cpu) / 1000 / elapsedMs) * 100);
    lastSample = { at: now, cpu: sample.cpuMicros };
    const errorRate = requests > 0 ? failures / requests : 0;
    requests = 0;
    failures = 0;
    const metrics: HealthMetrics = {
      cpu_usage: round2(cpu),
      memory_usage: round2(sample.rssBytes / (1024 * 1024)),
      response_time: round2(responseTime),
      error_rate: Math.round(errorRate * 10_000) / 10_000,
    };
    const status: HealthStatus = !databaseUp ? 'unhealthy' : errorRate > 0.05 || responseTime > 1000 ? 'degraded' : 'healthy';
    const event = systemHealth(deps.clock.now(), status, metrics, databaseUp);
    await deps.events.append([event]);
    return event;
  }

  async function emitAnalytics(): Promise<NewEvent[]> {
    const end = deps.clock.now();
    const start = new Date(end.getTime() - deps.analyticsIntervalMs);
    const scopes = await deps.usage.activeScopes(start, end);
    const out: NewEvent[] = [];
    for (const s of scopes) {
      const summary = await deps.summary.summarize(s.tenantId, s.mode, deps.analyticsIntervalMs);
      out.push(analyticsUpdate(s.tenantId, s.mode, end, summary));
    }
    if (out.length > 0) await deps.events.append(out);
    return out;
  }

  async function prune(): Promise<number> {
    const now = deps.clock.now().getTime();
    const pruned = await deps.events.prune(new Date(now - deps.retentionMs));
    if (deps.requestMetrics) await deps.requestMetrics.prune(new Date(now - deps.requestMetrics.retentionMs));
    if (deps.ingestions) await deps.ingestions.pruneFinished(new Date(now - deps.ingestions.retentionMs));
    if (deps.oauth) await deps.oauth.pruneExpired(new Date(now));
    return pruned;
  }

  /**
   * A tick claims the interval a little shorter than the interval, so the node that ran the last tick finds its
   * claim expired at its next one and keeps the turn; another node takes over once that node stops ticking.
   */
  async function takeTurn(what: string, intervalMs: number): Promise<boolean> {
    if (!deps.claims) return true;
    const ttlMs = Math.max(1, intervalMs - Math.min(1000, intervalMs / 10));
    return (await deps.claims.claim(`periodic:${what}`, ttlMs)) !== null;
  }

  /** Ticks under way, so stop() can wait for them: an event appended after stop() would outlive the node's turn. */
  const inFlight = new Set<Promise<unknown>>();
  const track = (tick: Promise<unknown>): void => {
    inFlight.add(tick);
    void tick.finally(() => inFlight.delete(tick));
  };

  const every = (ms: number, what: string, work: () => Promise<unknown>) => {
    let busy = false;
    const t = setInterval(() => {
      if (busy) return;
      busy = true;
      track(takeTurn(what, ms)
        .then((mine) => (mine ? work() : undefined))
        .catch((err: unknown) => reportError?.(what, err))
        .finally(() => { busy = false; }));
    }, ms);
    t.unref();
    timers.push(t);
  };

  return {
    emitHealth,
    emitAnalytics,
    prune,
    /** Counts an answered request for `error_rate` (5xx = failure). */
    recordResponse(status: number): void {
      requests++;
      if (status >= 500) failures++;
    },
    /** Starts the timers; `onError` hears about failed runs (they are retried at the next tick). */
    start(onError?: (what: string, error: unknown) => void): void {
      if (onError) reportError = onError;
      if (timers.length > 0) return;
      lastSample = { at: performance.now(), cpu: deps.sampleProcess().cpuMicros };
      every(deps.healthIntervalMs, 'system.health', emitHealth);
      every(deps.analyticsIntervalMs, 'analytics.update', emitAnalytics);
      every(deps.pruneIntervalMs, 'event pruning', prune);
      track(takeTurn('event pruning', deps.pruneIntervalMs)
        .then((mine) => (mine ? prune() : undefined))
        .catch((err: unknown) => reportError?.('event pruning', err)));
    },
    /** Stops the timers and waits for the ticks under way (they never reject). */
    async stop(): Promise<void> {
      for (const t of timers.splice(0)) clearInterval(t);
      await Promise.all(inFlight);
    },
    get running(): boolean {
      return timers.length > 0;
    },
  };
}
