import { createMemoryDashboardSessions } from '../adapters/dashboard-sessions/memory.dashboard-sessions.ts';
import { createRedisDashboardSessions } from '../adapters/dashboard-sessions/redis.dashboard-sessions.ts';
import { createMemoryClaims } from '../adapters/coordination/memory.claims.ts';
import { createRedisClaims } from '../adapters/coordination/redis.claims.ts';
import { createMemoryRateLimiter } from '../adapters/rate-limit/memory.rate-limiter.ts';
import { createRedisRateLimiter } from '../adapters/rate-limit/redis.rate-limiter.ts';
import { createRedisClient } from '../adapters/redis/redis-client.ts';
import { createRedisEventSignal } from '../adapters/streams/redis.event-signal.ts';
import { createRedisStreamSlots } from '../adapters/streams/redis.stream-slots.ts';
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

export function createCoordination(redisUrl: string | null, clock: Clock, warnings: WarningLog, keyring: () => Keyring): Coordination {
  if (redisUrl === null) {
    return {
      limiter: createMemoryRateLimiter(clock), claims: createMemoryClaims(clock), periodicClaims: undefined, slots: undefined,
      dashboardSessions: createMemoryDashboardSessions(clock),
      announceEvents: () => undefined,
      close: async () => undefined,
    };
  }
  const redis = createRedisClient(redisUrl, warnings);
  const claims = createRedisClaims({ redis });
  const slots = createRedisStreamSlots({ redis, warnings });
  const signal = createRedisEventSignal({ redis, warnings });
  const unlink: (() => void)[] = [];
  return {
    limiter: createRedisRateLimiter({ redis, clock }),
    claims,
    periodicClaims: claims,
    slots,
    dashboardSessions: createRedisDashboardSessions({ redis, clock, keyring }),
    announceEvents(events, hub) {
      unlink.push(events.onAppended((batch) => {
        if (batch.length > 0) signal.announce(batch[batch.length - 1]!.seq);
      }));
      unlink.push(signal.onRemote(() => hub.nudge()));
    },
    async close() {
      for (const stop of unlink.splice(0)) stop();
      await signal.close();
      await slots.close().catch((err: unknown) => warnings.warn({ err }, 'stream slots not given back to Redis'));
      redis.disconnect();
    },
  };
}
