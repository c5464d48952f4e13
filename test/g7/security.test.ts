import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { analyticsClient } from './client.ts';

describe('G7 analytics: security', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 0, 7, 10, 30));
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());

  it('answers UNAUTHORIZED 401 with details.reason for a missing, unknown or X-API-Key-only key', async () => {
    for (const res of [
      await analyticsClient(t.app, undefined)('timeframe=1h'),
      await analyticsClient(t.app, 'mnemo_live_notakey')('timeframe=1h'),
      await analyticsClient(t.app, undefined, { 'x-api-key': 'mnemo_live_notakey' })(),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(json(res).error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_api_key' } });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="mnemo"');
    }
  });

  it('needs memories:read', async () => {
    const res = await analyticsClient(t.app, await t.key({ scopes: ['memories:write'] }))('timeframe=1h');
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('PERMISSION_DENIED');
  });

  it("shows no figure of another tenant, or of the other mode", async () => {
    const alice = uniqueTenant('alice');
    const mallory = uniqueTenant('mallory');
    const aliceKey = await t.key({ tenant: alice, user: 'alice' });
    const a = g1(t.app, aliceKey);
    await a.create({ title: 'secret plan', content: 'the vault code is 1234', memory_type: 'secret_stuff' });
    await a.search({ query: 'vault code' });
    await a.get('00000000-0000-4000-8000-000000000000');
    await g1(t.app, await t.key({ tenant: alice, mode: 'test' })).create({ title: 'test mode', content: 'x' });
    clock.advance(60_000);
    const reportOf = async (key: string): Promise<Json> => {
      await t.container.requestMetrics.flush();
      return json(await analyticsClient(t.app, key)('timeframe=1h')).data;
    };
    const seen = await reportOf(await t.key({ tenant: mallory, user: 'mallory' }));
    expect(seen.summary).toEqual({
      total_memories: 0, total_searches: 0, total_operations: 0, active_users: 0, avg_response_time: null, success_rate: 1, cost_this_period: 0,
    });
    expect(seen.time_series.every((p: Json) => p.memory_operations === 0 && p.search_queries === 0 && p.errors === 0 && p.cost === 0)).toBe(true);
    expect(seen.top_queries).toEqual([]);
    expect(seen.memory_usage).toEqual({ total_size_mb: 0, growth_rate: 0, top_categories: [] });
    expect(seen.performance).toEqual({ uptime_percentage: 100, avg_throughput: 0, peak_throughput: 0, error_rate: 0 });
    expect(seen.cost_breakdown).toEqual({ storage: 0, compute: 0, api_calls: 0, total: 0 });
    const own = await reportOf(aliceKey);
    expect(own.summary).toMatchObject({ total_memories: 1, total_searches: 1, total_operations: 1, active_users: 1 });
    expect(own.memory_usage.top_categories.map((c: Json) => c.category)).toEqual(['secret_stuff']);
    expect(own.top_queries.map((q: Json) => q.query)).toEqual(['vault code']);
  });
});
