import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.ts';
import { REQUEST_METRICS_RETENTION_MS } from '../../src/core/analytics/request-recorder.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { actorIn } from '../support/fixtures.ts';
import { sleep } from './support.ts';

const acme: Scope = { tenantId: 'acme', mode: 'live', workspace: 'default' };
const all = (t: TestApp, scope: Scope, types?: string[]) => t.container.storage.events.readAfter({ ...scope, afterSeq: 0, types, limit: 1000 });

/** Resolves when a user.activity event of `userId` is stored (user activity is recorded after the answer). */
function activityOf(t: TestApp, userId: string, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { stop(); reject(new Error(`no user.activity of ${userId} within ${timeoutMs} ms`)); }, timeoutMs);
    const stop = t.container.storage.events.onAppended((events) => {
      if (events.some((e) => e.type === 'user.activity' && e.data.user_id === userId)) {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
}


describe('periodic events, user.activity and retention', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('emits system.health system-wide with the spec\'s fields', async () => {
    t = await createTestApp();
    const e = await t.container.periodic.emitHealth();
    expect(e.scope).toEqual({ tenantId: null, mode: null, workspace: null });
    expect(e.data).toMatchObject({ status: 'healthy', services: { api: 'up', database: 'up', search: 'up' } });
    const m = e.data.metrics as Record<string, number>;
    expect(Object.keys(m).sort()).toEqual(['cpu_usage', 'error_rate', 'memory_usage', 'response_time']);
    expect(m.cpu_usage).toBeGreaterThanOrEqual(0);
    expect(m.memory_usage).toBeGreaterThan(1);
    // Every tenant's log shows it.
    expect((await all(t, { tenantId: 'anyone', mode: 'test', workspace: 'x' }, ['system.health'])).map((x) => x.id)).toEqual([e.id]);
  });

  it('reports the 5xx share of answered requests as error_rate, then starts counting again', async () => {
    t = await createTestApp();
    for (const s of [200, 200, 404, 500]) t.container.periodic.recordResponse(s);
    expect(((await t.container.periodic.emitHealth()).data.metrics as Record<string, number>).error_rate).toBe(0.25);
    expect(((await t.container.periodic.emitHealth()).data.metrics as Record<string, number>).error_rate).toBe(0);
  });

  it('emits analytics.update only for tenants and modes with memory operations or searches in the interval', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    t = await createTestApp({ overrides: { clock } });
    const write = (scope: Scope, title: string, content: string) => t.container.memories.create(scope, actorIn(scope, 'u'), { title, content });
    await write(acme, 'a', 'b');
    await write({ ...acme, tenantId: 'old' }, 'a', 'b');
    clock.advance(120_000);
    await write({ ...acme, mode: 'test', workspace: 'w' }, 'c', 'd');
    clock.advance(30_000);
    const emitted = await t.container.periodic.emitAnalytics();
    expect(emitted.map((e) => e.scope)).toEqual([{ tenantId: 'acme', mode: 'test', workspace: null }]);
    expect(emitted[0]!.data).toMatchObject({ total_memories: 1, memory_operations: { creates: 1, total: 1 }, searches: 0 });
    // A minute later the create is out of the window; the analytics.update itself does not keep the tenant active.
    clock.advance(31_000);
    expect(await t.container.periodic.emitAnalytics()).toEqual([]);
  });

  it('emits user.activity at most once per user and scope per window', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    t = await createTestApp({ overrides: { clock } });
    const touch = (userId: string, scope = acme) => t.container.activity.touch({ scope, userId, keyId: 'key_1', surface: 'g1' });
    expect(await touch('ann')).not.toBeNull();
    expect(await touch('ann')).toBeNull();
    expect(await touch('bob')).not.toBeNull();
    expect(await touch('ann', { ...acme, workspace: 'w2' })).not.toBeNull();
    clock.advance(5 * 60_000 - 1);
    expect(await touch('ann')).toBeNull();
    clock.advance(1);
    const again = await touch('ann');
    expect(again?.data).toEqual({
      object: 'user_activity', user_id: 'ann', key_id: 'key_1', surface: 'g1', workspace: 'default',
      first_request_at: '2026-06-01T00:05:00.000Z', timestamp: '2026-06-01T00:05:00.000Z',
    });
    expect((await all(t, acme, ['user.activity'])).map((e) => e.data.user_id)).toEqual(['ann', 'bob', 'ann']);
  });

  it('records user.activity for authenticated requests of any surface, after the answer', async () => {
    t = await createTestApp();
    const key = await t.key({ user: 'cleo' });
    await t.app.inject({ method: 'GET', url: '/api/v1/memories', headers: { 'x-api-key': key } });
    await t.app.inject({ method: 'GET', url: '/api/v1/memories', headers: { 'x-api-key': 'mnemo_live_bad' } });
    // Positive control: a later request of another user is recorded; the refused one, made before it, is not.
    const dan = activityOf(t, 'dan');
    await t.app.inject({ method: 'GET', url: '/v1/search?q=x', headers: { authorization: `Bearer ${await t.key({ user: 'dan' })}` } });
    await dan;
    const events = await all(t, acme, ['user.activity']);
    expect(events.map((e) => [e.data.user_id, e.data.surface])).toEqual([['cleo', 'g1'], ['dan', 'g4']]);
  });

  it('prunes events older than MNEMO_EVENT_RETENTION_HOURS', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    t = await createTestApp({ overrides: { clock }, env: { MNEMO_EVENT_RETENTION_HOURS: '2' } });
    expect(t.container.realtime.eventRetentionMs).toBe(2 * 3_600_000);
    await t.container.memories.create(acme, actorIn(acme, 'u'), { title: 'old', content: 'x' });
    clock.advance(2 * 3_600_000 + 1);
    await t.container.memories.create(acme, actorIn(acme, 'u'), { title: 'new', content: 'y' });
    expect(await t.container.periodic.prune()).toBe(2); // memory.created + embedding.generated
    expect((await all(t, acme, ['memory.created'])).map((e) => e.data.title)).toEqual(['new']);
  });

  it('prunes request measurements older than 90 days with the events', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    t = await createTestApp({ overrides: { clock } });
    const record = () => t.container.requestMetrics.record({
      tenantId: 'acme', mode: 'live', keyId: 'k', userId: 'u', surface: 'g1', route: 'GET /x', status: 200, latencyMs: 1, bytesIn: 0, bytesOut: 0,
    });
    record();
    await t.container.requestMetrics.flush();
    clock.advance(REQUEST_METRICS_RETENTION_MS - 60_000);
    record();
    await t.container.requestMetrics.flush();
    const rows = () => t.container.storage.requestMetrics.list('acme', 'live', new Date(0), new Date(Date.UTC(2100, 0)));
    expect(await rows()).toHaveLength(2);
    clock.advance(120_000);
    await t.container.periodic.prune();
    expect((await rows()).map((r) => r.minute)).toEqual([new Date(Date.UTC(2026, 5, 1) + REQUEST_METRICS_RETENTION_MS - 60_000)]);
  });

  it('prunes ingestion jobs finished longer ago than MNEMO_INGEST_RETENTION_HOURS with the events; a job waiting for review stays', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    t = await createTestApp({ overrides: { clock }, env: { MNEMO_INGEST_RETENTION_HOURS: '3' } });
    const alice = actorIn(acme, 'alice'); // every permission, memories:auto_ingest included
    const messages = [{ role: 'user', content: 'I walk to work.' }];
    const old = await t.container.ingestion.start(acme, alice, { mode: 'raw', policy: 'auto', messages });
    const waiting = await t.container.ingestion.start(acme, alice, { mode: 'raw', policy: 'review', messages });
    await t.container.ingestionWorker.drain();
    clock.advance(2 * 3_600_000);
    const recent = await t.container.ingestion.start(acme, alice, { mode: 'raw', policy: 'auto', messages });
    await t.container.ingestionWorker.drain();
    clock.advance(3_600_000 + 1);
    await t.container.periodic.prune();
    const left = await t.container.storage.ingestions.list(acme, { limit: 10, offset: 0 });
    expect(left.items.map((j) => [j.id, j.state])).toEqual([[recent.id, 'completed'], [waiting.id, 'pending_review']]);
    expect(left.items.map((j) => j.id)).not.toContain(old.id);
  });

  it('starts and stops its timers', async () => {
    t = await createTestApp({ overrides: { realtime: { healthIntervalMs: 10, analyticsIntervalMs: 10_000, pruneIntervalMs: 10_000 } } });
    t.container.periodic.start();
    const health = () => all(t, acme, ['system.health']).then((events) => events.length);
    for (const deadline = Date.now() + 5000; (await health()) < 2;) {
      if (Date.now() > deadline) throw new Error('fewer than 2 system.health events in 5 s');
      await sleep(5);
    }
    await t.container.periodic.stop();
    const n = await health();
    // Time passing is the point: six intervals go by with the timers stopped, and none of them emits.
    await sleep(60);
    expect(await health()).toBe(n);
    // Positive control: an emission now is stored and seen, so the count above could have moved.
    await t.container.periodic.emitHealth();
    expect(await health()).toBe(n + 1);
    expect(t.container.periodic.running).toBe(false);
  });

  it('validates MNEMO_EVENT_RETENTION_HOURS', () => {
    expect(loadConfig({}).eventRetentionHours).toBe(168);
    expect(loadConfig({ MNEMO_EVENT_RETENTION_HOURS: '24' }).eventRetentionHours).toBe(24);
    expect(() => loadConfig({ MNEMO_EVENT_RETENTION_HOURS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ MNEMO_EVENT_RETENTION_HOURS: 'week' })).toThrow(/MNEMO_EVENT_RETENTION_HOURS/);
  });
});
