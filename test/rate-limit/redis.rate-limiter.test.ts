import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimiter } from '../../src/adapters/rate-limit/redis.rate-limiter.ts';
import { createRedisClient } from '../../src/adapters/redis/redis-client.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

let server: TestRedis;
beforeAll(async () => { server = await startRedisServer(); });
afterAll(async () => { await server?.stop(); });

let run = 0;
/** Each limiter gets its own key prefix: counters of one test never meet another's. */
const freshPrefix = (): string => `test${++run}:`;

rateLimiterContract('Redis rate limiter', (clock) =>
  createRedisRateLimiter({ redis: server.client(), clock, keyPrefix: freshPrefix() }));

describe('Redis rate limiter across nodes', () => {
  it('shares one window between two nodes (two clients), also under concurrent hits', async () => {
    const keyPrefix = freshPrefix();
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const nodeA = createRedisRateLimiter({ redis: server.client(), clock, keyPrefix });
    const nodeB = createRedisRateLimiter({ redis: server.client(), clock, keyPrefix });
    expect(await nodeA.hit('gateway:key_1', 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await nodeB.hit('gateway:key_1', 3, 60_000)).toMatchObject({ allowed: true, remaining: 1 });

    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? nodeA : nodeB).hit('burst', 10, 60_000)));
    expect(burst.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('lets a finished window expire from Redis (the key carries a TTL)', async () => {
    const keyPrefix = freshPrefix();
    const redis = server.client();
    const limiter = createRedisRateLimiter({ redis, clock: new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10)), keyPrefix });
    await limiter.hit('ttl', 5, 60_000);
    const keys = await redis.keys(`${keyPrefix}*`);
    expect(keys).toEqual([`${keyPrefix}rl:ttl|60000:${Date.UTC(2026, 0, 1)}`]);
    const ttl = await redis.pttl(keys[0]!);
    // 50 s left in the window plus the slack for clocks that disagree.
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(55_000);
  });

  it('rejects (does not hang) when Redis is unreachable, and warns once', async () => {
    const other = await startRedisServer();
    const warned: string[] = [];
    const redis = createRedisClient(other.url, { warn: (_details, message) => warned.push(message) });
    const limiter = createRedisRateLimiter({ redis, clock: new ManualClock(), keyPrefix: freshPrefix() });
    expect((await limiter.hit('x', 1, 60_000)).allowed).toBe(true);
    await other.stop();
    try {
      await expect(limiter.hit('x', 1, 60_000)).rejects.toThrow();
      expect(warned).toEqual(['Redis is unreachable; shared limits and events fail until it is back']);
    } finally {
      redis.disconnect();
    }
  });
});
