import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisDashboardSessions } from '../../../src/adapters/dashboard-sessions/redis.dashboard-sessions.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import { DEFAULT_SESSION_LIMITS } from '../../../src/core/dashboard-sessions/dashboard-session.port.ts';
import { startRedisServer, type TestRedis } from '../../support/redis-server.ts';
import { sessionStoreContract } from './session-store.contract.ts';

let server: TestRedis;
beforeAll(async () => { server = await startRedisServer(); });
afterAll(async () => { await server?.stop(); });

let run = 0;
sessionStoreContract('Redis sessions', (clock, limits) => {
  const keyPrefix = `test${++run}:`;
  return {
    store: createRedisDashboardSessions({ redis: server.client(), clock, limits, keyPrefix }),
    peer: createRedisDashboardSessions({ redis: server.client(), clock, limits, keyPrefix }),
  };
});

describe('Redis sessions at rest', () => {
  it('holds neither the API key nor the cookie: the key is sealed with a key derived from the cookie', async () => {
    const keyPrefix = `rest${++run}:`;
    const redis = server.client();
    const store = createRedisDashboardSessions({ redis, clock: new ManualClock(), keyPrefix });
    const apiKey = 'mk_live_0123456789abcdef0123456789abcdef';
    const { cookieValue, session } = await store.create(apiKey);
    const keys = await redis.keys(`${keyPrefix}*`);
    expect(keys.sort()).toEqual([`${keyPrefix}dashboard:session:${session.idDigest}`, `${keyPrefix}dashboard:sessions`].sort());
    const dump = JSON.stringify(await redis.hgetall(`${keyPrefix}dashboard:session:${session.idDigest}`));
    expect(dump).not.toContain(apiKey);
    expect(dump).not.toContain(apiKey.slice(8, 24));
    expect(dump).not.toContain(cookieValue);
    // The hash expires by itself after the idle limit (its TTL is renewed by use).
    const ttl = await redis.pttl(`${keyPrefix}dashboard:session:${session.idDigest}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_SESSION_LIMITS.idleMs);
  });

  it("does not open a session whose sealed key was swapped for another session's", async () => {
    const keyPrefix = `swap${++run}:`;
    const redis = server.client();
    const store = createRedisDashboardSessions({ redis, clock: new ManualClock(), keyPrefix });
    const mine = await store.create('mk_live_mine');
    const theirs = await store.create('mk_live_theirs_with_more_scopes');
    const hash = (id: string) => `${keyPrefix}dashboard:session:${id}`;
    const sealed = await redis.hget(hash(theirs.session.idDigest), 'key');
    await redis.hset(hash(mine.session.idDigest), 'key', sealed!);
    expect(await store.find(mine.cookieValue)).toBeNull();
    expect((await store.find(theirs.cookieValue))!.apiKey).toBe('mk_live_theirs_with_more_scopes');
  });
});
