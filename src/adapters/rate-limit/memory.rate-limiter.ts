import type { Clock } from '../../core/clock.ts';
import type { RateDecision, RateLimiter } from '../../core/rate-limit/rate-limiter.port.ts';

/**
 * Fixed-window counters in this process's memory: right for one node. Windows are aligned to the epoch
 * (a minute window resets on the minute), as a Redis INCR + EXPIRE counter would be.
 */
export function createMemoryRateLimiter(clock: Clock): RateLimiter {
  const windows = new Map<string, { windowStart: number; count: number; windowMs: number }>();
  const SWEEP_AT = 10_000;

  function sweep(now: number): void {
    for (const [key, w] of windows) if (now >= w.windowStart + w.windowMs) windows.delete(key);
  }

  return {
    async hit(bucket, limit, windowMs): Promise<RateDecision> {
      const now = clock.now().getTime();
      const windowStart = now - (now % windowMs);
      const key = `${bucket}|${windowMs}`;
      let w = windows.get(key);
      if (!w || w.windowStart !== windowStart) {
        if (windows.size >= SWEEP_AT) sweep(now);
        w = { windowStart, count: 0, windowMs };
        windows.set(key, w);
      }
      const resetAt = windowStart + windowMs;
      if (w.count >= limit) {
        return { allowed: false, limit, remaining: 0, resetAt: new Date(resetAt), retryAfterMs: resetAt - now };
      }
      w.count++;
      return { allowed: true, limit, remaining: limit - w.count, resetAt: new Date(resetAt), retryAfterMs: 0 };
    },
  };
}
