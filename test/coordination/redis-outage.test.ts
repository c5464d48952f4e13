import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';
import { bearer, openStream, startLiveApp, type LiveApp, type SseClient } from '../streams/support.ts';
import { g1 } from '../support/test-app.ts';
import { expectG3Error, g3 } from '../g3/client.ts';
import { signIn, type DashboardClient } from '../dashboard/session.ts';

/** A node whose Redis goes away: requests get a retryable 503 in their surface's envelope, never a 500 or a hang. */
describe('a node whose Redis is unreachable', () => {
  let redis: TestRedis;
  let node: LiveApp;
  let dataDir: string;
  const streams: SseClient[] = [];
  /** Signed in while Redis was up: its session lives there. */
  let dashboard: DashboardClient;
  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = mkdtempSync(join(tmpdir(), 'mnemo-redis-outage-'));
    node = await startLiveApp({}, { MNEMO_DATA_DIR: dataDir, MNEMO_REDIS_URL: redis.url });
    dashboard = await signIn(node.app, await node.key({ tier: 'enterprise' }));
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await node?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After while rate limits cannot be counted, and no detail of the outage', async () => {
    const key = await node.key({ tier: 'free' });
    expect((await g1(node.app, key).list()).statusCode).toBe(200);
    await redis.stop();

    const refused = await g1(node.app, key).list();
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(refused.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|redis/i);
    // Another surface answers in its own envelope, with the same status.
    expectG3Error(await g3(node.app, key).search({ query: 'x' }), 503, 'SERVICE_UNAVAILABLE');
  });

  it('answers a dashboard page 503 with Retry-After while its session cannot be read, and no detail of the outage', async () => {
    await redis.stop();
    const page = await dashboard.get('/dashboard/memories');
    expect(page.statusCode).toBe(503);
    expect(page.headers['retry-after']).toBe('1');
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('try again');
    expect(page.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|redis/i);
  });

  it('still admits a stream when the shared slots cannot be counted (this node counts it)', async () => {
    // An enterprise key has no gateway limit (none configured), so nothing refuses it before the stream's slot.
    const unlimited = await node.key({ tier: 'enterprise' });
    const s = await openStream(`${node.url}/api/v1/stream`, bearer(unlimited));
    streams.push(s);
    await s.waitFor((f) => f.retry !== undefined || f.comment !== undefined || f.event !== undefined);
    expect(s.events('error')).toEqual([]);
    expect(node.container.streams.size).toBe(1);
  });
});
