import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedisClient } from '../../../src/adapters/redis/redis-client.ts';
import { createRedisStreamSlots } from '../../../src/adapters/streams/redis.stream-slots.ts';
import type { StreamSlots } from '../../../src/core/streams/stream-slots.port.ts';
import { startRedisServer, type TestRedis } from '../../support/redis-server.ts';
import { streamSlotsContract } from './stream-slots.contract.ts';

let server: TestRedis;
const opened: StreamSlots[] = [];
beforeAll(async () => { server = await startRedisServer(); });
afterAll(async () => {
  await Promise.allSettled(opened.map((s) => s.close()));
  await server?.stop();
});

let run = 0;
const quiet = { warn: () => undefined };
const node = (keyPrefix: string, leaseMs?: number, redis = server.client()): StreamSlots => {
  const slots = createRedisStreamSlots({ redis, warnings: quiet, keyPrefix, leaseMs });
  opened.push(slots);
  return slots;
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

streamSlotsContract('Redis stream slots', () => {
  const keyPrefix = `test${++run}:`;
  return { slots: node(keyPrefix), peer: node(keyPrefix) };
});

describe('Redis stream slots across nodes', () => {
  const caps = { maxPerKey: 5, maxPerTenant: 100 };

  it("counts a key's streams on every node against one cap", async () => {
    const keyPrefix = `test${++run}:`;
    const [a, b] = [node(keyPrefix), node(keyPrefix)];
    for (let i = 0; i < 3; i++) expect((await a.take({ keyId: 'k', tenantId: 't' }, caps)).ok).toBe(true);
    for (let i = 0; i < 2; i++) expect((await b.take({ keyId: 'k', tenantId: 't' }, caps)).ok).toBe(true);
    expect(await b.take({ keyId: 'k', tenantId: 't' }, caps)).toEqual({ ok: false, cap: 'key', open: 5 });
    expect(await a.take({ keyId: 'k', tenantId: 't' }, caps)).toEqual({ ok: false, cap: 'key', open: 5 });
  });

  it("frees a crashed node's slots when its lease ends, while a live node's heartbeat keeps its own", async () => {
    const keyPrefix = `test${++run}:`;
    const LEASE_MS = 500;
    // The crashed node: its connection to Redis is cut, so its heartbeat stops and it never releases.
    const crashedClient = createRedisClient(server.url, quiet);
    const crashed = node(keyPrefix, LEASE_MS, crashedClient);
    const live = node(keyPrefix, LEASE_MS);
    for (let i = 0; i < 3; i++) expect((await crashed.take({ keyId: 'k', tenantId: 't' }, caps)).ok).toBe(true);
    for (let i = 0; i < 2; i++) expect((await live.take({ keyId: 'k', tenantId: 't' }, caps)).ok).toBe(true);
    crashedClient.disconnect();
    expect(await live.countKey('k')).toBe(5);
    await sleep(2.4 * LEASE_MS);
    // Only the live node's two slots remain, well after the crashed node's lease ended.
    expect(await live.countKey('k')).toBe(2);
    expect(await live.countTenant('t')).toBe(2);
    for (let i = 0; i < 3; i++) expect((await live.take({ keyId: 'k', tenantId: 't' }, caps)).ok).toBe(true);
    expect(await live.take({ keyId: 'k', tenantId: 't' }, caps)).toMatchObject({ ok: false, cap: 'key' });
  });

  it("rebuilds a node's counts from its own slots when Redis lost them", async () => {
    const keyPrefix = `test${++run}:`;
    const redis = server.client();
    const slots = node(keyPrefix, 150);
    await slots.take({ keyId: 'k', tenantId: 't' }, caps);
    await slots.take({ keyId: 'k', tenantId: 't' }, caps);
    await redis.flushdb();
    expect(await slots.countKey('k')).toBe(0);
    // The next heartbeat (every 150 ms) puts them back; on a loaded machine it may come late, so wait for it.
    await vi.waitFor(async () => expect(await slots.countKey('k')).toBe(2), { timeout: 3000, interval: 50 });
  });

  it('closes without waiting for an unreachable Redis (the lease frees its slots)', async () => {
    // Nothing listens on port 1: the client only reconnects, and a command fails once its retry is spent.
    const unreachable = createRedisClient('redis://127.0.0.1:1', quiet);
    try {
      const slots = createRedisStreamSlots({ redis: unreachable, warnings: quiet });
      const commandFailed = unreachable.ping().then(() => 'answered', () => 'failed');
      expect(await Promise.race([slots.close().then(() => 'closed'), commandFailed])).toBe('closed');
      expect(await commandFailed).toBe('failed');
    } finally {
      unreachable.disconnect();
    }
  });
});
