import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { actorIn } from '../support/fixtures.ts';
import { expectG4Error, fields, g4, ok, type G4Client } from './client.ts';

const NOW = Date.UTC(2026, 2, 2, 9, 0, 0); // Monday 2026-03-02 09:00 UTC
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const trend = (data: Json) => (data.search_trends as Json[]).map((b) => [b.date, b.searches]);

describe('G4 GET /v1/analytics/search', () => {
  let t: TestApp;
  let clock: ManualClock;
  let key: string;
  let api: G4Client;
  let scope: Scope;

  const remember = (s: Scope, title: string, content: string) => t.container.memories.create(s, actorIn(s), { title, content, tags: [] });
  /** One G4 search at `at`; returns the similarity scores it answered. */
  const searchAt = async (client: G4Client, at: number, q: string, params: Record<string, string | number> = {}) => {
    clock.set(at);
    const data = ok(await client.search({ q, similarity_threshold: 0, ...params }));
    clock.set(NOW);
    return (data.results as Json[]).map((r) => r.similarity_score as number);
  };

  beforeAll(async () => {
    clock = new ManualClock(NOW);
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(NOW);
    key = await t.freshTenant();
    api = g4(t.app, key);
    scope = { tenantId: t.tenant, mode: 'live', workspace: 'default' };
    await remember(scope, 'Deploy checklist', 'Run the deploy pipeline and watch the dashboard');
    await remember(scope, 'Lunch', 'Sandwich shop on the corner has good soup');
  });

  it('answers the spec shape with figures matching the searches made', async () => {
    const day = Date.UTC(2026, 2, 1);
    const deploy1 = await searchAt(api, day + 1000, 'Deploy pipeline');
    const deploy2 = await searchAt(api, day + 2000, '  deploy   PIPELINE ', { limit: 1 });
    const lunch = await searchAt(api, day + 3000, 'lunch soup', { limit: 1 });
    const none = await searchAt(api, day + 4000, 'nothing like this', { similarity_threshold: 0.99 });
    expect(none).toEqual([]);
    // A vector search counts in the totals but has no query text.
    clock.set(day + 5000);
    const { embedding } = ok(await api.embed({ text: 'deploy' }));
    const vector = ok(await api.vector({ vector: embedding, similarity_threshold: 0, limit: 2 })).results as Json[];
    // Searches on other surfaces count too (G3 here).
    clock.set(day + 6000);
    const g3 = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: `Bearer ${key}` }, payload: { query: 'lunch soup', threshold: 0 } });
    expect(g3.statusCode, g3.body).toBe(200);
    const g3Scores = (g3.json() as Json).matches.map((m: Json) => m.score as number);
    clock.set(NOW);

    const res = await api.analytics({ start_date: '2026-03-01', end_date: '2026-03-01' });
    const data = ok(res);
    expect(Object.keys(data).sort()).toEqual(['metrics', 'period', 'search_trends', 'top_queries']);
    expect(data.period).toEqual({ start: '2026-03-01T00:00:00.000Z', end: '2026-03-02T00:00:00.000Z', granularity: 'day' });
    const counts = [deploy1, deploy2, lunch, none, vector, g3Scores].map((r) => r.length);
    expect(data.metrics).toEqual({
      total_searches: 6,
      unique_queries: 3,
      avg_results_per_search: Math.round(mean(counts) * 100) / 100,
      avg_query_time_ms: expect.any(Number),
      zero_result_searches: 1,
    });
    expect(data.metrics.avg_query_time_ms).toBeGreaterThan(0);
    const top = data.top_queries as Json[];
    expect(top.map((q) => [q.query, q.count])).toEqual([['deploy pipeline', 2], ['lunch soup', 2], ['nothing like this', 1]]);
    expect(top[0]!.avg_similarity_score).toBeCloseTo(mean([mean(deploy1), mean(deploy2)]), 5);
    expect(top[1]!.avg_similarity_score).toBeCloseTo(mean([mean(lunch), mean(g3Scores)]), 5);
    expect(top[2]!.avg_similarity_score).toBeNull(); // it never found anything
    expect(data.search_trends).toEqual([{ date: '2026-03-01T00:00:00.000Z', searches: 6, avg_query_time_ms: data.metrics.avg_query_time_ms }]);
  });

  it('cuts trends on UTC hour, day, Monday-week and month boundaries, empty buckets included', async () => {
    const at = (iso: string) => Date.parse(iso);
    for (const iso of ['2026-03-01T23:59:59.999Z', '2026-03-02T00:00:00.000Z', '2026-03-08T23:59:59.999Z',
      '2026-03-09T00:00:00.000Z', '2026-03-31T23:59:59.999Z', '2026-04-01T00:00:00.000Z']) {
      await searchAt(api, at(iso), 'deploy');
    }
    const report = async (params: Record<string, string>) => ok(await api.analytics(params));

    const weeks = await report({ start_date: '2026-02-25', end_date: '2026-04-02T00:00:00Z', granularity: 'week' });
    expect(weeks.period).toEqual({ start: '2026-02-25T00:00:00.000Z', end: '2026-04-02T00:00:00.000Z', granularity: 'week' });
    expect(trend(weeks)).toEqual([
      ['2026-02-23T00:00:00.000Z', 1], ['2026-03-02T00:00:00.000Z', 2], ['2026-03-09T00:00:00.000Z', 1],
      ['2026-03-16T00:00:00.000Z', 0], ['2026-03-23T00:00:00.000Z', 0], ['2026-03-30T00:00:00.000Z', 2],
    ]);
    expect((weeks.search_trends as Json[])[3]!.avg_query_time_ms).toBeNull();

    const months = await report({ start_date: '2026-02-25', end_date: '2026-04-02T00:00:00Z', granularity: 'month' });
    expect(trend(months)).toEqual([['2026-02-01T00:00:00.000Z', 0], ['2026-03-01T00:00:00.000Z', 5], ['2026-04-01T00:00:00.000Z', 1]]);

    // A date alone as end_date takes in its whole day.
    const days = await report({ start_date: '2026-03-01T12:00:00Z', end_date: '2026-03-02' });
    expect(trend(days)).toEqual([['2026-03-01T00:00:00.000Z', 1], ['2026-03-02T00:00:00.000Z', 1]]);
    expect(days.metrics.total_searches).toBe(2);

    // A date-time without an offset is UTC, whatever the server's time zone.
    const hours = await report({ start_date: '2026-03-01T23:00', end_date: '2026-03-02T02:00:00+00:00', granularity: 'hour' });
    expect(hours.period).toMatchObject({ start: '2026-03-01T23:00:00.000Z', end: '2026-03-02T02:00:00.000Z' });
    expect(trend(hours)).toEqual([['2026-03-01T23:00:00.000Z', 1], ['2026-03-02T00:00:00.000Z', 1], ['2026-03-02T01:00:00.000Z', 0]]);

    // end_date is exclusive; start_date inclusive.
    const edge = await report({ start_date: '2026-03-02T00:00:00Z', end_date: '2026-03-08T23:59:59.999Z' });
    expect(edge.metrics.total_searches).toBe(1);
  });

  it('covers the last 7 days by default, and answers zeros for a period without searches', async () => {
    const data = ok(await api.analytics());
    expect(data.period).toEqual({ start: '2026-02-23T09:00:00.000Z', end: '2026-03-02T09:00:00.000Z', granularity: 'day' });
    expect(data.metrics).toEqual({
      total_searches: 0, unique_queries: 0, avg_results_per_search: null, avg_query_time_ms: null, zero_result_searches: 0,
    });
    expect(data.top_queries).toEqual([]);
    // 8 day buckets: the partial first and last days included.
    expect(trend(data)).toEqual(Array.from({ length: 8 }, (_, i) => [new Date(Date.UTC(2026, 1, 23 + i)).toISOString(), 0]));
  });

  it('counts only the caller\'s tenant, mode and workspace in every figure', async () => {
    const day = Date.UTC(2026, 2, 1, 10);
    const other = g4(t.app, await t.key({ tenant: uniqueTenant('other-co') }));
    const sandbox = g4(t.app, await t.key({ mode: 'test' }));
    const w2 = g4(t.app, key, { 'x-workspace-id': 'w2' });
    await searchAt(api, day, 'mine');
    await searchAt(other, day, 'theirs');
    await searchAt(other, day, 'nothing at all', { similarity_threshold: 0.99 });
    await searchAt(sandbox, day, 'sandboxed');
    await searchAt(sandbox, day, 'sandboxed');
    await searchAt(w2, day, 'elsewhere', { similarity_threshold: 0.99 });
    await searchAt(w2, day, 'elsewhere');
    await searchAt(w2, day, 'again');

    const range = { start_date: '2026-03-01', end_date: '2026-03-01' };
    const figures = async (client: G4Client) => {
      const d = ok(await client.analytics(range));
      return [d.metrics.total_searches, d.metrics.unique_queries, d.metrics.zero_result_searches,
        (d.top_queries as Json[]).map((q) => `${q.query}:${q.count}`), (d.search_trends as Json[]).map((b) => b.searches)];
    };
    // Only the caller's own tenant (live, default workspace) holds memories: every other search finds nothing.
    expect(await figures(api)).toEqual([1, 1, 0, ['mine:1'], [1]]);
    expect(await figures(other)).toEqual([2, 2, 2, ['nothing at all:1', 'theirs:1'], [2]]);
    expect(await figures(sandbox)).toEqual([2, 1, 2, ['sandboxed:2'], [2]]);
    expect(await figures(w2)).toEqual([3, 2, 3, ['elsewhere:2', 'again:1'], [3]]);
  });

  describe('errors', () => {
    it('refuses dates that are not ISO 8601, listing every problem', async () => {
      const e = expectG4Error(await api.analytics({ start_date: 'yesterday', end_date: '2026-13-01' }), 400, 'VALIDATION_ERROR');
      expect(fields(e)).toEqual(['end_date', 'start_date']);
      expect(e.message).toMatch(/ISO 8601/);
    });

    it('refuses a start not before the end', async () => {
      for (const range of [{ start_date: '2026-03-02T00:00:00Z', end_date: '2026-03-01T00:00:00Z' },
        { start_date: '2026-03-01T00:00:00Z', end_date: '2026-03-01T00:00:00Z' }, { start_date: '2026-03-03' }]) {
        expect(fields(expectG4Error(await api.analytics(range), 400, 'VALIDATION_ERROR'))).toEqual(['start_date']);
      }
    });

    it('refuses a period longer than 366 days, or more than 744 buckets', async () => {
      // A date alone as end_date ends at the next midnight: exactly 366 days.
      ok(await api.analytics({ start_date: '2025-01-01', end_date: '2026-01-01', granularity: 'week' }));
      expect(fields(expectG4Error(await api.analytics({ start_date: '2025-01-01', end_date: '2026-01-02' }), 400, 'VALIDATION_ERROR')))
        .toEqual(['end_date']);
      ok(await api.analytics({ start_date: '2026-01-01', end_date: '2026-01-31', granularity: 'hour' })); // 744 hours
      const e = expectG4Error(await api.analytics({ start_date: '2026-01-01', end_date: '2026-02-01', granularity: 'hour' }), 400, 'VALIDATION_ERROR');
      expect(fields(e)).toEqual(['granularity']);
    });

    it('refuses an unknown granularity, with the date problems too', async () => {
      expect(fields(expectG4Error(await api.analytics({ granularity: 'year' }), 400, 'VALIDATION_ERROR'))).toEqual(['granularity']);
      expect(fields(expectG4Error(await api.analytics({ granularity: 'year', start_date: 'x' }), 400, 'VALIDATION_ERROR')))
        .toEqual(['granularity', 'start_date']);
    });

    it('refuses a bad X-Workspace-ID with the other problems', async () => {
      const bad = g4(t.app, key, { 'x-workspace-id': '../etc' });
      expect(fields(expectG4Error(await bad.analytics({ start_date: 'x' }), 400, 'VALIDATION_ERROR'))).toEqual(['X-Workspace-ID', 'start_date']);
    });

    it('needs a key with memories:read', async () => {
      expectG4Error(await g4(t.app, undefined).analytics(), 401, 'UNAUTHORIZED');
      expectG4Error(await g4(t.app, 'mnemo_live_nope').analytics(), 401, 'UNAUTHORIZED');
      const writer = g4(t.app, await t.key({ scopes: ['memories:write'] }));
      expectG4Error(await writer.analytics(), 403, 'PERMISSION_DENIED');
    });

    it('answers an unknown path under /v1/analytics in the G4 envelope', async () => {
      expectG4Error(await t.app.inject({ method: 'GET', url: '/v1/analytics/nope', headers: api.headers }), 404, 'NOT_FOUND');
    });
  });
});
