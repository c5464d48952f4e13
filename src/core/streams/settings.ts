/**
 * Timing and limits of the real-time surfaces (G8 SSE stream, G4 search stream and live search, G7 analytics
 * stream) and of the periodic events. Defaults follow the spec's Limits table; tests shrink the time unit so that
 * a "30 s" heartbeat takes 30 ms.
 */
export interface RealtimeSettings {
  /**
   * How many milliseconds one "second" of stream timing lasts: heartbeat intervals, key re-checks, the per-minute
   * event window and the analytics stream interval are counted in these units. 1000 in production.
   */
  timeUnitMs: number;
  /** Concurrent long-lived stream connections per API key (G8 SSE, G4 live search, G7 analytics stream). */
  maxConnectionsPerKey: number;
  /** Concurrent stream connections per tenant, all its keys together (`MNEMO_MAX_STREAMS_PER_TENANT`). */
  maxConnectionsPerTenant: number;
  /** Concurrent stream connections of this process, every tenant (`MNEMO_MAX_STREAMS`). */
  maxConnections: number;
  /** Events sent on one G8 connection per 60 time units; past it the connection gets RATE_LIMITED and closes. */
  maxEventsPerMinute: number;
  /** An open stream re-checks its key (revoked, expired) every this many time units, and before sending events. */
  keyCheckSeconds: number;
  /** The G8 heartbeat interval in seconds: default and lowest allowed value (the spec's minimum), and the highest. */
  heartbeatDefaultSeconds: number;
  heartbeatMaxSeconds: number;
  /** The event tail looks for events written by other processes on the same database this often (ms). */
  pollMs: number;
  /** `system.health` and `analytics.update` are emitted this often (ms). */
  healthIntervalMs: number;
  analyticsIntervalMs: number;
  /** `user.activity` is emitted at most once per user (and tenant, mode, workspace) per this many ms. */
  activityWindowMs: number;
  /** Events older than this are pruned (ms), checked every `pruneIntervalMs`. */
  eventRetentionMs: number;
  pruneIntervalMs: number;
}

export const DEFAULT_REALTIME_SETTINGS: RealtimeSettings = {
  timeUnitMs: 1000,
  maxConnectionsPerKey: 5,
  maxConnectionsPerTenant: 50,
  maxConnections: 1000,
  maxEventsPerMinute: 1000,
  keyCheckSeconds: 5,
  heartbeatDefaultSeconds: 30,
  heartbeatMaxSeconds: 3600,
  pollMs: 1000,
  healthIntervalMs: 60_000,
  analyticsIntervalMs: 60_000,
  activityWindowMs: 5 * 60_000,
  eventRetentionMs: 168 * 3_600_000,
  pruneIntervalMs: 3_600_000,
};
