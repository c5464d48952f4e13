import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import { ManualClock } from '../../src/core/clock.ts';

describe('in-memory rate limiter', () => {
  it('allows `limit` hits per fixed window and says when to retry', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const limiter = createMemoryRateLimiter(clock);
    for (let i = 1; i <= 3; i++) expect(await limiter.hit('k', 3, 60_000)).toMatchObject({ allowed: true, remaining: 3 - i });
    const denied = await limiter.hit('k', 3, 60_000);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 50_000 });
    expect(denied.resetAt.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    expect((await limiter.hit('other', 3, 60_000)).allowed).toBe(true);
    clock.advance(50_000);
    expect(await limiter.hit('k', 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
  });
});
