import { createMemoryClaims } from '../adapters/coordination/memory.claims.ts';
import { createRedisClaims } from '../adapters/coordination/redis.claims.ts';
import { createMemoryRateLimiter } from '../adapters/rate-limit/memory.rate-limiter.ts';
import { createRedisRateLimiter } from '../adapters/rate-limit/redis.rate-limiter.ts';
import { createRedisClient } from '../adapters/redis/redis-client.ts';
import { createRedisStreamSlots } from '../adapters/streams/redis.stream-slots.ts';
import type { Clock } from '../core/clock.ts';
import type { Claims } from '../core/coordination/claims.port.ts';
import type { RateLimiter } from '../core/rate-limit/rate-limiter.port.ts';
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
  close(): Promise<void>;
}

export function createCoordination(redisUrl: string | null, clock: Clock, warnings: WarningLog): Coordination {
  if (redisUrl === null) {
    return {
      limiter: createMemoryRateLimiter(clock), claims: createMemoryClaims(clock), periodicClaims: undefined, slots: undefined,
      close: async () => undefined,
    };
  }
  const redis = createRedisClient(redisUrl, warnings);
  const claims = createRedisClaims({ redis });
  const slots = createRedisStreamSlots({ redis, warnings });
  return {
    limiter: createRedisRateLimiter({ redis, clock }),
    claims,
    periodicClaims: claims,
    slots,
    async close() {
      await slots.close().catch((err: unknown) => warnings.warn({ err }, 'stream slots not given back to Redis'));
      redis.disconnect();
    },
  };
}
