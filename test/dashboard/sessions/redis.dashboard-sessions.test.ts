import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisDashboardSessions } from '../../../src/adapters/dashboard-sessions/redis.dashboard-sessions.ts';
import { keyringFrom } from '../../../src/adapters/secrets/master-keyring.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import { DEFAULT_SESSION_LIMITS } from '../../../src/core/dashboard-sessions/dashboard-session.port.ts';
import type { Keyring } from '../../../src/core/secrets/envelope.ts';
import { startRedisServer, type TestRedis } from '../../support/redis-server.ts';
import { sessionStoreContract } from './session-store.contract.ts';

let server: TestRedis;
beforeAll(async () => { server = await startRedisServer(); });
afterAll(async () => { await server?.stop(); });

const keyring = keyringFrom([randomBytes(32)]);
let run = 0;
sessionStoreContract('Redis sessions', (clock, limits) => {
  const keyPrefix = `test${++run}:`;
  return {
    store: createRedisDashboardSessions({ redis: server.client(), clock, limits, keyPrefix, keyring: () => keyring }),
    peer: createRedisDashboardSessions({ redis: server.client(), clock, limits, keyPrefix, keyring: () => keyring }),
  };
});

describe('Redis sessions at rest', () => {
  const open = (ring: Keyring = keyring, clock = new ManualClock()) => {
    const keyPrefix = `rest${++run}:`;
    const redis = server.client();
    const store = createRedisDashboardSessions({ redis, clock, keyPrefix, keyring: () => ring });
    return { redis, store, keyPrefix, clock, hash: (id: string) => `${keyPrefix}dashboard:session:${id}` };
  };

  it('holds neither the API key, the CSRF token nor the cookie', async () => {
    const { redis, store, keyPrefix, hash } = open();
    const apiKey = 'mk_live_0123456789abcdef0123456789abcdef';
    const { cookieValue, session } = await store.create(apiKey);
    const keys = await redis.keys(`${keyPrefix}*`);
    expect(keys.sort()).toEqual([hash(session.idDigest), `${keyPrefix}dashboard:sessions`].sort());
    const dump = JSON.stringify(await redis.hgetall(hash(session.idDigest)));
    for (const secret of [apiKey, apiKey.slice(8, 24), session.csrfToken, cookieValue]) expect(dump).not.toContain(secret);
    // The hash expires by itself after the idle limit.
    const ttl = await redis.pttl(hash(session.idDigest));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_SESSION_LIMITS.idleMs);
  });

  it('needs the master key as well as the cookie: the same Redis under another keyring opens no session', async () => {
    const mine = open();
    const { cookieValue } = await mine.store.create('mk_live_k');
    const other = createRedisDashboardSessions({
      redis: mine.redis, clock: mine.clock, keyPrefix: mine.keyPrefix, keyring: () => keyringFrom([randomBytes(32)]),
    });
    expect(await other.find(cookieValue)).toBeNull();
    expect((await mine.store.find(cookieValue))!.apiKey).toBe('mk_live_k');
  });

  it("does not open a session whose sealed fields were swapped for another session's", async () => {
    const { redis, store, hash } = open();
    const mine = await store.create('mk_live_mine');
    const theirs = await store.create('mk_live_theirs_with_more_scopes');
    const sealed = await redis.hget(hash(theirs.session.idDigest), 'sealed');
    await redis.hset(hash(mine.session.idDigest), 'sealed', sealed!);
    expect(await store.find(mine.cookieValue)).toBeNull();
    expect((await store.find(theirs.cookieValue))!.apiKey).toBe('mk_live_theirs_with_more_scopes');
  });

  it('renews the TTL when the session is used', async () => {
    const { redis, store, hash } = open();
    const { cookieValue, session } = await store.create('mk_live_k');
    await redis.pexpire(hash(session.idDigest), 1000);
    expect(await store.find(cookieValue)).not.toBeNull();
    expect(await redis.pttl(hash(session.idDigest))).toBeGreaterThan(1000);
  });

  it('leaves nothing behind when a workspace is chosen for a session that has ended', async () => {
    const { redis, store, hash } = open();
    const { cookieValue, session } = await store.create('mk_live_k');
    await store.end((await store.find(cookieValue))!);
    await store.setWorkspace(session, 'other');
    expect(await redis.exists(hash(session.idDigest))).toBe(0);
  });
});
