import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { RateLimiter } from '../../src/core/rate-limit/rate-limiter.port.ts';

/** Builds a limiter over fresh, empty counters driven by `clock`. */
export type LimiterFactory = (clock: ManualClock) => RateLimiter | Promise<RateLimiter>;

const MINUTE = 60_000;
/** 10 s into a minute: the window ends 50 s later. */
const START = Date.UTC(2026, 0, 1, 0, 0, 10);

/** What every RateLimiter adapter must do: fixed windows aligned to the epoch, per bucket and window length. */
export function rateLimiterContract(name: string, make: LimiterFactory): void {
  describe(`${name}: the RateLimiter contract`, () => {
    async function setup(start = START) {
      const clock = new ManualClock(start);
      return { clock, limiter: await make(clock) };
    }

    it('allows `limit` hits in a window, then refuses with when to retry', async () => {
      const { limiter } = await setup();
      for (let i = 1; i <= 3; i++) {
        expect(await limiter.hit('k', 3, MINUTE)).toMatchObject({ allowed: true, limit: 3, remaining: 3 - i, retryAfterMs: 0 });
      }
      const denied = await limiter.hit('k', 3, MINUTE);
      expect(denied).toMatchObject({ allowed: false, limit: 3, remaining: 0, retryAfterMs: 50_000 });
      expect(denied.resetAt.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    });

    it('opens a new window at the next epoch-aligned boundary', async () => {
      const { clock, limiter } = await setup();
      for (let i = 0; i < 5; i++) await limiter.hit('k', 2, MINUTE);
      clock.advance(49_999);
      expect((await limiter.hit('k', 2, MINUTE)).allowed).toBe(false);
      clock.advance(1);
      const fresh = await limiter.hit('k', 2, MINUTE);
      expect(fresh).toMatchObject({ allowed: true, remaining: 1 });
      expect(fresh.resetAt.toISOString()).toBe('2026-01-01T00:02:00.000Z');
    });

    it('keeps buckets apart, and windows of different lengths on one bucket apart', async () => {
      const { limiter } = await setup();
      expect((await limiter.hit('a', 1, MINUTE)).allowed).toBe(true);
      expect((await limiter.hit('a', 1, MINUTE)).allowed).toBe(false);
      expect((await limiter.hit('b', 1, MINUTE)).allowed).toBe(true);
      expect((await limiter.hit('a', 1, 3_600_000)).allowed).toBe(true);
    });

    it('refuses every hit when the limit is 0', async () => {
      const { limiter } = await setup();
      expect(await limiter.hit('zero', 0, MINUTE)).toMatchObject({ allowed: false, remaining: 0 });
    });

    it('allows exactly `limit` of many concurrent hits', async () => {
      const { limiter } = await setup();
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.hit('burst', 7, MINUTE)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
      expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    });

    it('aligns windows to the epoch, not to the first hit', async () => {
      const { clock, limiter } = await setup(Date.UTC(2026, 0, 1, 0, 59, 59, 500));
      expect((await limiter.hit('h', 1, 3_600_000)).resetAt.toISOString()).toBe('2026-01-01T01:00:00.000Z');
      clock.advance(500);
      expect((await limiter.hit('h', 1, 3_600_000))).toMatchObject({ allowed: true, remaining: 0 });
    });
  });
}
