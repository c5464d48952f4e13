import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { signIn } from '../dashboard/session.ts';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';
import { g1 } from '../support/test-app.ts';
import { bearer, openStream, sleep, startLiveApp, type LiveApp, type SseClient } from '../streams/support.ts';

/**
 * Two servers of one deployment: one database (a shared SQLite file stands in for PostgreSQL) and one Redis
 * (MNEMO_REDIS_URL), each listening on its own loopback port. What a client may do is counted across both.
 */
describe('two nodes sharing Redis', () => {
  let redis: TestRedis;
  let dataDir: string;
  let nodeA: LiveApp;
  let nodeB: LiveApp;
  const streams: SseClient[] = [];
  // One clock for both nodes, inside a minute: a window boundary cannot fall in the middle of a test.
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 5));

  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = mkdtempSync(join(tmpdir(), 'mnemo-two-nodes-'));
    const env = { MNEMO_DATA_DIR: dataDir, MNEMO_REDIS_URL: redis.url };
    // No poll of the shared log within a test: a write of the other node can only arrive by the Redis signal.
    const overrides = { clock, realtime: { pollMs: 600_000 } };
    nodeA = await startLiveApp(overrides, env);
    nodeB = await startLiveApp(overrides, env);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await nodeA?.close();
    await nodeB?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("counts a key's requests on both nodes in one window (the free tier's 60 a minute)", async () => {
    const key = await nodeA.key({ tier: 'free', tenant: 'acme-rate' });
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await g1((i % 2 ? nodeB : nodeA).app, key).list()).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    // 30 on each node: each node alone would still allow 30 more.
    const refused = await g1(nodeB.app, key).list();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect((await g1(nodeA.app, key).list()).statusCode).toBe(429);
  });

  it("caps a key's streams across both nodes, and a stream that ends frees its slot for the other node", async () => {
    const key = await nodeA.key({ tenant: 'acme-streams' });
    const sse = async (node: LiveApp) => {
      const s = await openStream(`${node.url}/api/v1/stream`, bearer(key));
      streams.push(s);
      return s;
    };
    const onA = [await sse(nodeA), await sse(nodeA), await sse(nodeA)];
    await sse(nodeB);
    await sse(nodeB);
    const keyId = (await nodeA.container.apiKeys.authenticate(key)).keyId;
    const slots = nodeB.container.slots!;
    for (let i = 0; i < 200 && (await slots.countKey(keyId)) < 5; i++) await sleep(5);
    expect([nodeA.container.streams.count(keyId), nodeB.container.streams.count(keyId), await slots.countKey(keyId)]).toEqual([3, 2, 5]);

    const refused = await sse(nodeB);
    const error = await refused.waitFor((f) => f.event === 'error');
    expect(error.data).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringMatching(/at most 5 concurrent streams per API key/) });

    onA[0]!.close();
    for (let i = 0; i < 200 && (await slots.countKey(keyId)) > 4; i++) await sleep(5);
    const admitted = await sse(nodeB);
    await admitted.waitFor((f) => f.retry !== undefined || f.comment !== undefined || f.event !== undefined);
    expect(admitted.events('error')).toEqual([]);
    expect(await slots.countKey(keyId)).toBe(5);
  });

  it('delivers a write on node A to an SSE client of node B at once (announced through Redis, not polled)', async () => {
    const key = await nodeA.key({ tenant: 'acme-fanout' });
    const watcher = await openStream(`${nodeB.url}/api/v1/stream?events=memory.created`, bearer(key));
    streams.push(watcher);
    await watcher.waitFor((f) => f.retry !== undefined || f.comment !== undefined || f.event !== undefined);
    const created = await g1(nodeA.app, key).create({ title: 'Fan-out', content: 'written on node A' });
    expect(created.statusCode).toBe(201);
    const frame = await watcher.waitFor((f) => f.event === 'memory.created');
    expect(JSON.stringify(frame.data)).toContain((created.json() as { data: { id: string } }).data.id);
  });

  it("serves a dashboard session signed in on node A from node B (workspace, forms, sign-out), with no sticky sessions", async () => {
    const key = await nodeA.key({ tenant: 'acme-dashboard' });
    await g1(nodeA.app, key, { 'x-workspace-id': 'research' }).create({ content: 'kept on the shared store', title: 'Shared note' });
    const onA = await signIn(nodeA.app, key);
    const get = (node: LiveApp, url: string) => node.app.inject({ method: 'GET', url, headers: { cookie: onA.cookie } });
    // The workspace chosen on A is the session's on B.
    expect((await get(nodeA, '/dashboard/memories?workspace=research')).body).toContain('Shared note');
    const onB = await get(nodeB, '/dashboard/memories');
    expect(onB.statusCode).toBe(200);
    expect(onB.body).toContain('Shared note');
    // A form of the session (its CSRF token) posts on B; signing out there ends the session on A too.
    const out = await nodeB.app.inject({
      method: 'POST', url: '/dashboard/sign-out', headers: { cookie: onA.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: onA.csrf }).toString(),
    });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/dashboard/sign-in?ended=out');
    const after = await get(nodeA, '/dashboard/memories');
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toMatch(/^\/dashboard\/sign-in/);
  });
});
