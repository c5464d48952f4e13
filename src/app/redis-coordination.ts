import { createRedisDashboardSessions } from '../adapters/dashboard-sessions/redis.dashboard-sessions.ts';
import { createRedisClaims } from '../adapters/coordination/redis.claims.ts';
import { createRedisRateLimiter } from '../adapters/rate-limit/redis.rate-limiter.ts';
import { createRedisClient } from '../adapters/redis/redis-client.ts';
import { createRedisEventSignal } from '../adapters/streams/redis.event-signal.ts';
import { createRedisStreamSlots } from '../adapters/streams/redis.stream-slots.ts';
import type { Clock } from '../core/clock.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import type { WarningLog } from '../core/warning-log.ts';
import type { Coordination } from './coordination.factory.ts';

/** What the nodes of a deployment share in one Redis (`MNEMO_REDIS_URL`); coordination.factory.ts imports it when configured. */
export function createRedisCoordination(redisUrl: string, clock: Clock, warnings: WarningLog, keyring: () => Keyring): Coordination {
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
