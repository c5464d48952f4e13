import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryClaims } from '../../src/adapters/coordination/memory.claims.ts';
import { createRedisClaims } from '../../src/adapters/coordination/redis.claims.ts';
import { createSqliteStorage, type SqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { createAnalyticsSummary } from '../../src/core/analytics/summary.ts';
import { systemClock } from '../../src/core/clock.ts';
import type { Claims } from '../../src/core/coordination/claims.port.ts';
import { createPeriodicEvents } from '../../src/core/events/periodic-events.ts';
import { createActivityTracker } from '../../src/core/events/user-activity.ts';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';

/**
 * Two nodes: two sets of services over one SQLite file (the shared store stands in for PostgreSQL) and two Redis
 * clients. What must happen once per cluster happens once.
 */
let server: TestRedis;
let dir: string;
let storage: SqliteStorage;
let run = 0;
beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'mnemo-cluster-'));
  storage = createSqliteStorage({ file: join(dir, 'mnemo.db'), synchronous: 'normal' });
});
afterAll(async () => {
  await storage?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const redisClaims = (keyPrefix: string): Claims => createRedisClaims({ redis: server.client(), keyPrefix });
const eventsOf = async (type: string, tenantId = 'acme') =>
  storage.events.readAfter({ tenantId, mode: 'live', workspace: null, afterSeq: 0, types: [type], limit: 1000 });

describe('user.activity across nodes', () => {
  const scope = { tenantId: 'acme', mode: 'live' as const, workspace: 'default' };
  const tracker = (claims: Claims) =>
    createActivityTracker({ events: storage.events, claims, clock: systemClock, windowMs: 60_000 });

  it('is emitted once when the same user reaches two nodes at once (Redis claims)', async () => {
    const keyPrefix = `cluster${++run}:`;
    const [nodeA, nodeB] = [tracker(redisClaims(keyPrefix)), tracker(redisClaims(keyPrefix))];
    const touches = await Promise.all([nodeA, nodeB, nodeA, nodeB].map((n) => n.touch({ scope, userId: 'ann', keyId: 'key_1' })));
    expect(touches.filter((e) => e !== null)).toHaveLength(1);
    expect((await eventsOf('user.activity')).filter((e) => e.data.user_id === 'ann')).toHaveLength(1);
  });

  it('is emitted by each node when each keeps its own window (the per-node default this replaces)', async () => {
    const [nodeA, nodeB] = [tracker(createMemoryClaims(systemClock)), tracker(createMemoryClaims(systemClock))];
    await nodeA.touch({ scope, userId: 'bob', keyId: 'key_1' });
    await nodeB.touch({ scope, userId: 'bob', keyId: 'key_1' });
    expect((await eventsOf('user.activity')).filter((e) => e.data.user_id === 'bob')).toHaveLength(2);
  });

  it('gives the window back when the event could not be stored, so the next request announces it', async () => {
    const claims = redisClaims(`cluster${++run}:`);
    let failNext = true;
    const flaky = {
      append: async (events: Parameters<typeof storage.events.append>[0]) => {
        if (failNext) { failNext = false; throw new Error('store unavailable'); }
        return storage.events.append(events);
      },
    };
    const node = createActivityTracker({ events: flaky, claims, clock: systemClock, windowMs: 60_000 });
    await expect(node.touch({ scope, userId: 'cy', keyId: 'key_1' })).rejects.toThrow('store unavailable');
    expect(await node.touch({ scope, userId: 'cy', keyId: 'key_1' })).not.toBeNull();
  });
});

describe('periodic events across nodes', () => {
  const INTERVAL_MS = 40;
  const node = (claims: Claims, rssMiB: number) => createPeriodicEvents({
    events: storage.events, usage: storage.usage, summary: createAnalyticsSummary({ usage: storage.usage, clock: systemClock }),
    ping: () => storage.ping(), clock: systemClock, claims,
    // Each node reports its own memory, so an event tells which node emitted it.
    sampleProcess: () => ({ cpuMicros: 0, rssBytes: rssMiB * 1024 * 1024 }),
    healthIntervalMs: INTERVAL_MS, analyticsIntervalMs: 3_600_000, retentionMs: 3_600_000, pruneIntervalMs: 3_600_000,
  });
  const healthByNode = async (): Promise<number[]> =>
    (await eventsOf('system.health')).map((e) => (e.data.metrics as { memory_usage: number }).memory_usage);
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  it('fires system.health once per interval in the cluster, and the other node takes over when one stops', async () => {
    const keyPrefix = `cluster${++run}:`;
    const nodeA = node(redisClaims(keyPrefix), 1);
    const nodeB = node(redisClaims(keyPrefix), 2);
    const before = (await healthByNode()).length;
    const started = performance.now();
    nodeA.start();
    nodeB.start();
    await sleep(10 * INTERVAL_MS);
    await Promise.all([nodeA.stop(), nodeB.stop()]);
    const elapsed = performance.now() - started;
    const together = (await healthByNode()).slice(before);
    // A tick claims the turn for 36 ms (the interval less a tenth): two emissions are at least that far apart,
    // whereas two unco-ordinated nodes would each emit every 40 ms.
    expect(together.length).toBeGreaterThanOrEqual(2);
    expect(together.length).toBeLessThanOrEqual(Math.floor(elapsed / (INTERVAL_MS * 0.9)) + 1);

    // Node A is gone (it stopped holding the turn): node B's ticks emit from now on.
    const mark = (await healthByNode()).length;
    nodeB.start();
    await sleep(4 * INTERVAL_MS);
    await nodeB.stop();
    const afterA = (await healthByNode()).slice(mark);
    expect(afterA.length).toBeGreaterThanOrEqual(1);
    expect(new Set(afterA)).toEqual(new Set([2]));
  });
});
