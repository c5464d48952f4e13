import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import type { RateDecision, RateLimiter } from '../../core/rate-limit/rate-limiter.port.ts';
import { luaScript } from '../redis/lua-script.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/**
 * Counts one hit unless the window is full, atomically: every node sees the same count. A refused hit is not
 * counted (as in the in-memory limiter), so the stored count never exceeds the limit. The key expires once its
 * window is over (plus slack for clocks of different nodes that disagree a little).
 */
const hitScript = luaScript(`
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then return -1 end
count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return count
`);

/** How long a window's key outlives the window's end, so a node whose clock lags a little still finds it. */
const EXPIRY_SLACK_MS = 5_000;

/**
 * Fixed-window counters in Redis, shared by every node: the same semantics as the in-memory limiter (windows
 * aligned to the epoch by the given clock). The window start is part of the key (`rl:{bucket}|{windowMs}:{start}`),
 * so the window is decided by the clock, not by Redis's expiry, which only clears finished windows away.
 */
export function createRedisRateLimiter(deps: { redis: Redis; clock: Clock; keyPrefix?: string }): RateLimiter {
  const { redis, clock } = deps;
  const prefix = deps.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;

  return {
    async hit(bucket, limit, windowMs): Promise<RateDecision> {
      const now = clock.now().getTime();
      const windowStart = now - (now % windowMs);
      const resetAt = windowStart + windowMs;
      const key = `${prefix}rl:${bucket}|${windowMs}:${windowStart}`;
      const ttlMs = resetAt - now + EXPIRY_SLACK_MS;
      const count = Number(await hitScript(redis, [key], [limit, ttlMs]));
      if (count < 0) {
        return { allowed: false, limit, remaining: 0, resetAt: new Date(resetAt), retryAfterMs: resetAt - now };
      }
      return { allowed: true, limit, remaining: limit - count, resetAt: new Date(resetAt), retryAfterMs: 0 };
    },
  };
}
