import { createMemoryDashboardSessions } from '../adapters/dashboard-sessions/memory.dashboard-sessions.ts';
import { createMemoryClaims } from '../adapters/coordination/memory.claims.ts';
import { createMemoryRateLimiter } from '../adapters/rate-limit/memory.rate-limiter.ts';
import type { Clock } from '../core/clock.ts';
import type { Claims } from '../core/coordination/claims.port.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import type { DashboardSessionStore } from '../core/dashboard-sessions/dashboard-session.port.ts';
import type { EventRepository } from '../core/events/event.repository.ts';
import type { RateLimiter } from '../core/rate-limit/rate-limiter.port.ts';
import type { EventHub } from '../core/streams/event-hub.ts';
import type { StreamSlots } from '../core/streams/stream-slots.port.ts';
import type { WarningLog } from '../core/warning-log.ts';

/** What nodes of one deployment share: in this process alone, or in Redis (`MNEMO_REDIS_URL`). */
export interface Coordination {
  limiter: RateLimiter;
  /** The user.activity windows. */
  claims: Claims;
  /** The turn of the periodic events; absent: this process runs every tick. */
  periodicClaims: Claims | undefined;
  /** Stream caps per key and tenant on every node; absent: the process's connection registry counts alone. */
  slots: StreamSlots | undefined;
  /** Dashboard sign-in sessions: any node serves a session's pages when they live in Redis. */
  dashboardSessions: DashboardSessionStore;
  /** Lets the streams of every node hear this node's appends at once (without Redis: other nodes poll). */
  announceEvents(events: Pick<EventRepository, 'onAppended'>, hub: Pick<EventHub, 'nudge'>): void;
  close(): Promise<void>;
}

/**
 * A single node's coordination in memory, or with `MNEMO_REDIS_URL` every node's in Redis. The Redis adapters (and
 * ioredis, about a tenth of a server's start-up CPU) are imported only when Redis is configured.
 */
export async function createCoordination(redisUrl: string | null, clock: Clock, warnings: WarningLog, keyring: () => Keyring): Promise<Coordination> {
  if (redisUrl === null) {
    return {
      limiter: createMemoryRateLimiter(clock), claims: createMemoryClaims(clock), periodicClaims: undefined, slots: undefined,
      dashboardSessions: createMemoryDashboardSessions(clock),
      announceEvents: () => undefined,
      close: async () => undefined,
    };
  }
  const { createRedisCoordination } = await import('./redis-coordination.ts');
  return createRedisCoordination(redisUrl, clock, warnings, keyring);
}
