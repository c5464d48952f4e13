import type { FastifyBaseLogger } from 'fastify';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import { isDomainError } from '../../core/errors.ts';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import type { Scope } from '../../core/scope.ts';
import { newConnectionId, type ConnectionRegistry } from '../../core/streams/connection-registry.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';
import type { StreamSlots } from '../../core/streams/stream-slots.port.ts';
import { streamRefusal, type StreamRefusal } from './stream-refusal.ts';

/**
 * One long-lived stream connection (G8 SSE, G4 live search, G7 analytics), whatever its transport: the slot in the
 * connection registry (the per-key, per-tenant and per-process caps), the periodic re-check of the key, the
 * `user.activity` of opening it, and its timers, all given back exactly once when the connection ends — by the
 * client, by the surface, by a revoked key or by server shutdown.
 */

/** How a transport tells its client why the stream ends, and when it has ended (sse.ts and ws.ts make these). */
export interface StreamEnd {
  /** Whether the connection has already ended. */
  readonly closed: boolean;
  /** Called once when the connection ends, by either side; at once when it already has. */
  onClose(listener: () => void): void;
  /** A cap refused the stream, or the server is stopping (CONNECTION_ERROR): tell the client and end. */
  refuse(refusal: StreamRefusal): void;
  /** The server is shutting down: tell the client and end. */
  goingAway(): void;
  /** The key no longer authenticates (revoked, expired): tell the client and end. */
  revoked(message: string): void;
}

export interface StreamSessionDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  streams: Pick<ConnectionRegistry, 'acquire'>;
  /** The per-key and per-tenant caps counted on every node (Redis); absent: this process's registry counts alone. */
  slots?: Pick<StreamSlots, 'take'> | undefined;
  realtime: Pick<RealtimeSettings, 'timeUnitMs' | 'keyCheckSeconds' | 'maxConnectionsPerKey' | 'maxConnectionsPerTenant' | 'maxConnections'>;
  activity?: Pick<ActivityTracker, 'touch'> | undefined;
}

export interface StreamOpening {
  principal: Principal;
  /** The key as presented, re-checked while the stream is open. */
  credential: string | undefined;
  /** The scope the stream serves (its workspace is the one noted in `user.activity`). */
  scope: Scope;
  /** `g4`, `g7`, `g8`: the surface noted in `user.activity`. */
  surface: string;
  /** `sse`, `search-live`, `analytics`: for the registry's logs and tests. */
  kind: string;
  /** A connection id the client already knows (G8 sends it as a header); else a new one. */
  id?: string | undefined;
  log: FastifyBaseLogger;
}

export interface StreamSession {
  readonly id: string;
  /** True once the connection has ended (the slot is free, the timers are stopped). */
  readonly closed: boolean;
  /**
   * Checks the key now. False when it no longer authenticates (the client is told and the connection ends) or
   * the session has ended; a failure of the check itself (storage closing) keeps an open session.
   */
  keyStillValid(): Promise<boolean>;
  /** Runs `task` every `seconds` stream seconds (RealtimeSettings.timeUnitMs) until the session ends. */
  every(seconds: number, task: () => unknown): void;
  /** Runs `cleanup` once when the session ends (at once when it has). */
  onEnd(cleanup: () => void): void;
}

/** Notes `user.activity` for a stream's caller; a failure is logged, never surfaced. */
export function recordStreamActivity(
  deps: Pick<StreamSessionDeps, 'activity'>, c: Pick<StreamOpening, 'principal' | 'scope' | 'surface' | 'log'>,
): void {
  void deps.activity?.touch({ scope: c.scope, userId: c.principal.userId, keyId: c.principal.keyId, surface: c.surface })
    .catch((err: unknown) => c.log.warn({ err }, 'user.activity not recorded'));
}

/**
 * Opens a session for an authenticated connection: notes the activity, takes the registry slot (a refusal is
 * rendered by `end` and null returned) and starts the key re-check. Null too when the connection ended already.
 */
export async function openStreamSession(deps: StreamSessionDeps, c: StreamOpening, end: StreamEnd): Promise<StreamSession | null> {
  if (end.closed) return null;
  // Opening counts as using the key, refused or not (as an HTTP request that gets a 429 does).
  recordStreamActivity(deps, c);
  const id = c.id ?? newConnectionId();
  const slot = deps.streams.acquire({
    id, keyId: c.principal.keyId, tenantId: c.principal.tenantId, kind: c.kind, shutdown: () => end.goingAway(),
  });
  if (!slot.ok) {
    end.refuse(streamRefusal(slot.cap, deps.realtime));
    return null;
  }
  const shared = await takeSharedSlot(deps, c);
  if (shared.refused) {
    slot.release();
    end.refuse(streamRefusal(shared.refused, deps.realtime));
    return null;
  }

  const timers: NodeJS.Timeout[] = [];
  const cleanups: (() => void)[] = [];
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const t of timers.splice(0)) clearInterval(t);
    for (const cleanup of cleanups.splice(0)) {
      try {
        cleanup();
      } catch (err) {
        c.log.error({ err }, 'stream cleanup failed');
      }
    }
    slot.release();
    shared.release?.().catch((err: unknown) => c.log.warn({ err }, 'shared stream slot not given back'));
  };

  const session: StreamSession = {
    id,
    get closed() {
      return closed;
    },
    async keyStillValid() {
      if (closed) return false;
      try {
        await deps.apiKeys.authenticate(c.credential);
        return !closed;
      } catch (err) {
        if (isDomainError(err) && err.code === 'UNAUTHENTICATED') {
          if (!closed) end.revoked(err.message);
          return false;
        }
        return !closed;
      }
    },
    every(seconds, task) {
      if (closed) return;
      const timer = setInterval(task, seconds * deps.realtime.timeUnitMs);
      // A stream's timers never keep the process alive on their own.
      timer.unref();
      timers.push(timer);
    },
    onEnd(cleanup) {
      if (closed) cleanup();
      else cleanups.push(cleanup);
    },
  };

  end.onClose(close);
  if (closed) return null;
  session.every(deps.realtime.keyCheckSeconds, () => void session.keyStillValid());
  return session;
}

/**
 * The cluster-wide slot, when slots are shared. Unreachable shared slots do not refuse the stream: the caps of this
 * process still hold, and a stream is worth more than an exact count across nodes for a while.
 */
async function takeSharedSlot(
  deps: StreamSessionDeps, c: StreamOpening,
): Promise<{ refused?: 'key' | 'tenant'; release?: () => Promise<void> }> {
  if (!deps.slots) return {};
  try {
    const taken = await deps.slots.take(
      { keyId: c.principal.keyId, tenantId: c.principal.tenantId },
      { maxPerKey: deps.realtime.maxConnectionsPerKey, maxPerTenant: deps.realtime.maxConnectionsPerTenant },
    );
    return taken.ok ? { release: taken.release } : { refused: taken.cap };
  } catch (err) {
    c.log.warn({ err }, 'shared stream slots unavailable; this stream counts on this node only');
    return {};
  }
}
