import { randomUUID } from 'node:crypto';
import type { ApiKeyCache } from './pg-api-key-cache.ts';
import type { PgExecutor, PgListener } from './pg-executor.ts';

/** The channel PostgreSQL migration 26's triggers notify on a change of `api_keys` (payload: the key's id, or `*`). */
export const API_KEYS_CHANNEL = 'mnemo_api_keys';

export interface ApiKeyListenerOptions {
  /** How long the probe notification may take to come back before this attempt counts as failed. */
  probeTimeoutMs?: number;
  /** Waits between attempts after a failure or a lost session: doubling from the first up to the last. */
  retryMs?: { first: number; max: number };
  /**
   * While serving, a probe goes round this often and must come back within probeTimeoutMs: a session that died
   * without the driver noticing (a network path gone silent, an idle connection dropped by a firewall) hears
   * nothing, and would otherwise keep a revoked key cached for good.
   */
  heartbeatMs?: number;
}

/** A running listener; `close` stops it (and its retries) and leaves the cache disabled. */
export interface ApiKeyListener {
  /** Resolves when the cache first serves, or when the first attempt failed (then it retries in the background). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Keeps `cache` in step with every node's key changes: LISTENs on a session of its own, then sends itself a probe
 * notification through the executor's pool and enables the cache only once the probe comes back (so a database that
 * cannot deliver notifications, such as a single-session PGlite served over a socket, leaves it bypassed). A lost
 * session disables the cache at once (emptied, every lookup read from the database) until listening works again; so
 * does a probe sent every heartbeatMs that does not come back in time.
 */
export function listenForApiKeyChanges(db: PgExecutor, cache: ApiKeyCache, options: ApiKeyListenerOptions = {}): ApiKeyListener {
  const probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
  const retry = options.retryMs ?? { first: 500, max: 30_000 };
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  let session: PgListener | null = null;
  let closed = false;
  let wait = retry.first;
  let timer: NodeJS.Timeout | undefined;
  /** The attempt under way or last made, which `close` waits for. */
  let running: Promise<void> = Promise.resolve();
  let probe: { payload: string; arrived: () => void; cancel: () => void } | null = null;
  let heartbeat: NodeJS.Timeout | undefined;

  const onNotification = (payload: string) => {
    if (probe && payload === probe.payload) probe.arrived();
    else if (payload.startsWith('probe:')) return; // another node's probe, or one of ours that came back late
    else if (payload === '*') cache.evictAll();
    else cache.evict(payload);
  };
  const scheduleRetry = () => {
    if (closed) return;
    timer = setTimeout(() => { running = attempt(); }, wait);
    timer.unref();
    wait = Math.min(wait * 2, retry.max);
  };

  /** Sends a probe notification through the pool; true once it came back on the LISTEN session in time. */
  async function probed(): Promise<boolean> {
    const payload = `probe:${randomUUID()}`;
    const arrived = new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), probeTimeoutMs);
      t.unref();
      probe = { payload, arrived: () => { clearTimeout(t); resolve(true); }, cancel: () => { clearTimeout(t); resolve(false); } };
    });
    try {
      await db.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANNEL, payload]);
      return await arrived;
    } catch {
      (probe as { cancel: () => void } | null)?.cancel();
      return false;
    } finally {
      probe = null;
    }
  }

  async function attempt(): Promise<void> {
    if (!db.listen || closed) return;
    let opened: PgListener | null = null;
    // This attempt's session: lost before it serves, the attempt fails below; lost after, the cache stops at once.
    const state = { serving: false, lost: false };
    const onLost = () => {
      state.lost = true;
      if (!state.serving) return;
      state.serving = false;
      clearTimeout(heartbeat);
      cache.disable();
      const dead = session;
      session = null;
      void dead?.close().catch(() => undefined);
      scheduleRetry();
    };
    // While serving: a probe that does not come back counts as a lost session.
    const beat = () => {
      heartbeat = setTimeout(() => {
        running = probed().then((ok) => {
          if (closed || !state.serving) return;
          if (ok) beat();
          else onLost();
        });
      }, heartbeatMs);
      heartbeat.unref();
    };
    try {
      opened = await db.listen(API_KEYS_CHANNEL, onNotification, onLost);
      if (closed) throw new Error('closed');
      const ok = await probed();
      if (!ok || state.lost || closed) throw new Error('no notification came back on the LISTEN session');
      session = opened;
      wait = retry.first;
      state.serving = true;
      cache.enable();
      beat();
    } catch {
      probe = null;
      await opened?.close();
      cache.disable();
      scheduleRetry();
    }
  }

  const ready = attempt();
  running = ready;
  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(heartbeat);
      cache.disable();
      // Closing does not wait out a probe: the attempt then fails and, closed, retries no more.
      (probe as { cancel: () => void } | null)?.cancel();
      await running;
      await session?.close();
      session = null;
    },
  };
}
