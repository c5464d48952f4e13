import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { RATIO } from '../../src/core/analytics/latency-histogram.ts';
import type { AnsweredRequest } from '../../src/core/analytics/request-recorder.ts';
import type { IngestionJob } from '../../src/core/ingestion/ingestion.types.ts';
import { makeIngestion } from '../support/fixtures.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { analyticsClient } from './client.ts';

const NOW = Date.UTC(2026, 0, 7, 10, 30, 15); // a Wednesday
const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('G7 analytics: GET /api/v1/analytics', () => {
  let t: TestApp;
  const clock = new ManualClock(NOW);
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());
  beforeEach(() => { clock.set(NOW); });

  /** Writes the measurements recorded so far, then asks. */
  const report = async (key: string, query = '', headers: Record<string, string> = {}) => {
    await t.container.requestMetrics.flush();
    return analyticsClient(t.app, key, headers)(query);
  };
  const answered = (over: Partial<AnsweredRequest>): AnsweredRequest => ({
    tenantId: t.tenant, mode: 'live', keyId: 'key_x', userId: 'user-1', surface: 'g1', route: 'GET /api/v1/memories/:id',
    status: 200, latencyMs: 10, bytesIn: 0, bytesOut: 100, ...over,
  });

  it("answers the spec's shape, with the spec's buckets for every timeframe and an empty period in zeros and nulls", async () => {
    const key = await t.freshTenant();
    const cases: [tf: string, n: number, first: number, last: number][] = [
      ['1h', 60, Date.UTC(2026, 0, 7, 9, 31), Date.UTC(2026, 0, 7, 10, 30)],
      ['24h', 24, Date.UTC(2026, 0, 6, 11), Date.UTC(2026, 0, 7, 10)],
      ['7d', 7, Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 7)],
      ['30d', 30, Date.UTC(2026, 0, 7) - 29 * DAY, Date.UTC(2026, 0, 7)],
      ['90d', 13, Date.UTC(2026, 0, 5) - 12 * 7 * DAY, Date.UTC(2026, 0, 5)], // ISO weeks start on Monday
    ];
    // The tenant's first request: nothing measured yet (this request is measured once answered).
    const body = json(await report(key, 'timeframe=1h'));
    expect(Object.keys(body.data)).toEqual(['summary', 'time_series', 'top_queries', 'memory_usage', 'performance', 'cost_breakdown']);
    expect(body.data.summary).toEqual({
      total_memories: 0, total_searches: 0, total_operations: 0, active_users: 0, avg_response_time: null, success_rate: 1, cost_this_period: 0,
    });
    expect(body.data.time_series[0]).toEqual({
      timestamp: iso(Date.UTC(2026, 0, 7, 9, 31)), memory_operations: 0, search_queries: 0,
      response_times: { avg: null, p50: null, p95: null, p99: null }, errors: 0, cost: 0,
    });
    expect(body.data.top_queries).toEqual([]);
    expect(body.data.memory_usage).toEqual({ total_size_mb: 0, growth_rate: 0, top_categories: [] });
    expect(body.data.performance).toEqual({ uptime_percentage: 100, avg_throughput: 0, peak_throughput: 0, error_rate: 0 });
    expect(body.data.cost_breakdown).toEqual({ storage: 0, compute: 0, api_calls: 0, total: 0 });
    for (const [tf, n, first, last] of cases) {
      const res = await report(key, `timeframe=${tf}`);
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(body.success).toBe(true);
      expect(body.metadata).toEqual({ timeframe: tf, generated_at: iso(NOW), next_update: iso(NOW + 5000) });
      const series = body.data.time_series as Json[];
      expect(series).toHaveLength(n);
      expect(series[0]!.timestamp).toBe(iso(first));
      expect(series.at(-1)!.timestamp).toBe(iso(last));
    }
    // No timeframe: 24h.
    expect(json(await report(key)).metadata.timeframe).toBe('24h');
  });

  it('estimates p50 / p95 / p99 of a known distribution within the documented bound, per bucket and minute', async () => {
    await t.freshTenant();
    const key = await t.key();
    for (let ms = 1; ms <= 100; ms++) t.container.requestMetrics.record(answered({ latencyMs: ms, status: ms <= 5 ? 500 : 200 }));
    const body = json(await report(key, 'timeframe=1h&metrics=response_times,error_rate'));
    const bucket = (body.data.time_series as Json[]).at(-1)!;
    expect(bucket.response_times.avg).toBe(50.5);
    for (const [p, exact] of [['p50', 50], ['p95', 95], ['p99', 99]] as const) {
      expect(Math.abs(Math.log(bucket.response_times[p] / exact))).toBeLessThanOrEqual(Math.log(Math.sqrt(RATIO)) + 1e-6);
    }
    expect(bucket.errors).toBe(5);
    expect(body.data.summary).toEqual({ avg_response_time: 50.5, success_rate: 0.95 });
    expect(body.data.performance).toEqual({ error_rate: 0.05 });
  });

  it('counts memory operations, searches, users, storage by memory_type and cost from real requests', async () => {
    await t.freshTenant();
    const alice = await t.key({ user: 'alice' });
    const bob = await t.key({ user: 'bob' });
    const a = g1(t.app, alice);
    const created = json(await a.create({ title: 'Deploy', content: 'blue green deploy notes', memory_type: 'procedure' })).data;
    clock.advance(MIN);
    await g1(t.app, bob).create({ title: 'Lunch', content: 'pasta', memory_type: 'fact' });
    await a.update(created.id, { content: 'blue green deploy notes, revised' });
    await a.search({ query: 'deploy' });
    await a.search({ query: 'Deploy ' });
    await g1(t.app, bob).search({ query: 'pasta' });
    await a.get('00000000-0000-4000-8000-000000000000'); // a 404: an error
    clock.advance(MIN);
    const res = await report(alice, 'timeframe=1h');
    const d = json(res).data;
    expect(d.summary).toMatchObject({ total_memories: 2, total_searches: 3, total_operations: 3, active_users: 2 });
    expect(d.summary.avg_response_time).toBeGreaterThan(0);
    const series = d.time_series as Json[];
    expect(series.at(-1)!.memory_operations).toBe(0);
    expect(series.at(-2)!).toMatchObject({ memory_operations: 2, search_queries: 3, errors: 1 });
    expect(series.at(-3)!).toMatchObject({ memory_operations: 1, search_queries: 0, errors: 0 });
    expect(d.top_queries.map((q: Json) => [q.query, q.count])).toEqual([['deploy', 2], ['pasta', 1]]);
    const bytes = { procedure: 'Deploy'.length + 'blue green deploy notes, revised'.length, fact: 'Lunch'.length + 'pasta'.length };
    expect(d.memory_usage.top_categories).toEqual([
      { category: 'procedure', size_mb: Math.round((bytes.procedure / 1048576) * 1e4) / 1e4, percentage: Math.round((bytes.procedure / (bytes.procedure + bytes.fact)) * 1e4) / 100 },
      { category: 'fact', size_mb: Math.round((bytes.fact / 1048576) * 1e4) / 1e4, percentage: Math.round((bytes.fact / (bytes.procedure + bytes.fact)) * 1e4) / 100 },
    ]);
    expect(d.memory_usage.growth_rate).toBeNull(); // nothing stored before the period
    expect(d.performance.peak_throughput).toBe(6);
    expect(d.performance.uptime_percentage).toBe(100);
    const c = d.cost_breakdown;
    expect(c.total).toBeCloseTo(c.storage + c.compute + c.api_calls, 5);
    expect(c.api_calls).toBeCloseTo((7 / 1000) * 0.01, 6); // 2 creates, an update, 3 searches, a get
    expect(d.summary.cost_this_period).toBe(c.total);
  });

  it('prices the model tokens of ingestion jobs finished in the period as the llm line, in the totals', async () => {
    const key = await t.freshTenant();
    const scope = { tenantId: t.tenant, mode: 'live' as const, workspace: 'default' };
    // Jobs as the extract worker leaves them (the model's usage recorded), stored as such: no model runs here.
    const job = (over: Partial<IngestionJob>) => makeIngestion(scope, { state: 'completed', attempts: 1, createdAt: new Date(NOW - HOUR), ...over });
    const usage = (modelCalls: number, promptTokens: number, completionTokens: number) => ({ model: 'test-model', modelCalls, promptTokens, completionTokens });
    for (const j of [
      job({ usage: usage(3, 1_500_000, 500_000), finishedAt: new Date(NOW - 2 * MIN) }), // 2M tokens: 2 × 0.5
      job({ scope: { ...scope, workspace: 'w2' }, state: 'failed', usage: usage(1, 150_000, 50_000), finishedAt: new Date(NOW - 2 * MIN + 1000) }),
      job({ state: 'pending_review', usage: usage(1, 9_000_000, 0), finishedAt: null }), // not finished: not counted yet
      job({ scope: { ...scope, mode: 'test' }, usage: usage(1, 9_000_000, 0), finishedAt: new Date(NOW - 2 * MIN) }),
      job({ usage: usage(1, 9_000_000, 0), finishedAt: new Date(NOW - 2 * HOUR) }), // before the period
    ]) await t.container.storage.ingestions.insert(j);
    const d = json(await report(key, 'timeframe=1h')).data;
    const c = d.cost_breakdown;
    expect(Object.keys(c)).toEqual(['storage', 'compute', 'api_calls', 'llm', 'total']);
    expect(c.llm).toBe(1.1); // 2.2M tokens at the example 0.5 per million
    expect(c.total).toBeCloseTo(c.storage + c.compute + c.api_calls + c.llm, 6);
    expect(d.summary.cost_this_period).toBe(c.total);
    const bucket = (d.time_series as Json[]).find((p) => p.timestamp === iso(Math.floor((NOW - 2 * MIN) / MIN) * MIN))!;
    expect(bucket.cost).toBeGreaterThanOrEqual(1.1);
    expect((d.time_series as Json[]).reduce((sum, p) => sum + p.cost, 0)).toBeCloseTo(c.total, 4);
    const projected = json(await report(key, 'timeframe=1h&metrics=cost_breakdown,projected_cost')).data.cost_breakdown;
    expect(projected.llm).toBe(1.1);
    expect(projected.projected_cost).toBeGreaterThan(1.1 * 24 * 30 * 0.9);
    // A day later the jobs are out of the hour reported.
    clock.advance(DAY);
    // A day later the jobs are out of the hour reported, and so is the line.
    expect(json(await report(key, 'timeframe=1h&metrics=cost_breakdown')).data.cost_breakdown).not.toHaveProperty('llm');
  });

  it('selects sections with metrics, and shows api_calls and projected_cost only when named', async () => {
    const key = await t.freshTenant();
    const d = json(await report(key, 'timeframe=24h&metrics=total_memories,search_queries')).data;
    expect(Object.keys(d)).toEqual(['summary', 'time_series', 'top_queries']);
    expect(d.summary).toEqual({ total_memories: 0, total_searches: 0 });
    expect(d.time_series[0]).toEqual({ timestamp: expect.any(String), search_queries: 0 });
    const costs = json(await report(key, 'metrics=cost_breakdown&metrics=projected_cost,api_calls')).data;
    expect(Object.keys(costs)).toEqual(['summary', 'performance', 'cost_breakdown']);
    expect(costs.summary).toEqual({ api_calls: 1 });
    expect(Object.keys(costs.cost_breakdown)).toEqual(['storage', 'compute', 'api_calls', 'total', 'projected_cost']);
    expect(Object.keys(json(await report(key, 'metrics=storage_usage')).data)).toEqual(['memory_usage']);
  });

  it('reports a date range grouped by hour, day, week or month', async () => {
    const key = await t.freshTenant();
    const start = '2026-01-01T00:00:00Z';
    const end = '2026-03-01T00:00:00Z';
    const months = json(await report(key, `start_date=${start}&end_date=${end}&group_by=month`));
    expect(months.metadata.timeframe).toBe('2026-01-01T00:00:00.000Z/2026-03-01T00:00:00.000Z');
    expect(months.data.time_series.map((p: Json) => p.timestamp)).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(json(await report(key, `start_date=2026-01-05&end_date=2026-01-07`)).data.time_series).toHaveLength(2); // day by default
    expect(json(await report(key, `start_date=2026-01-05&end_date=2026-01-06&group_by=hour`)).data.time_series).toHaveLength(24);
    expect(json(await report(key, `start_date=2026-01-01&end_date=2026-01-15&group_by=week`)).data.time_series.map((p: Json) => p.timestamp))
      .toEqual(['2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z']);
    expect(json(await report(key, 'timeframe=1h&group_by=hour')).data.time_series).toHaveLength(2);
    // No offset: UTC; an offset's unencoded + (a space) is still an offset.
    expect(json(await report(key, 'start_date=2026-01-05T10:00&end_date=2026-01-05T12:00:00%2B01:00&group_by=hour')).metadata.timeframe)
      .toBe('2026-01-05T10:00:00.000Z/2026-01-05T11:00:00.000Z');
    expect(json(await report(key, 'start_date=2026-01-05T10:00:00+01:00&end_date=2026-01-06')).metadata.timeframe)
      .toBe('2026-01-05T09:00:00.000Z/2026-01-06T00:00:00.000Z');
  });

  it('counts the minute holding a range\'s start (figures are kept by the minute)', async () => {
    await t.freshTenant();
    const key = await t.key();
    clock.set(Date.UTC(2026, 0, 7, 10, 0, 45));
    t.container.requestMetrics.record(answered({}));
    await g1(t.app, key).search({ query: 'anything' });
    clock.set(NOW);
    const d = json(await report(key, 'start_date=2026-01-07T10:00:30Z&end_date=2026-01-07T10:01:00Z&group_by=hour')).data;
    expect(d.summary).toMatchObject({ total_searches: 1 });
    expect(d.time_series[0]).toMatchObject({ search_queries: 1, errors: 0 });
    expect(d.performance.peak_throughput).toBe(2);
  });

  it('answers CSV for format=csv or Accept: application/csv, which a CSV parser reads back', async () => {
    await t.freshTenant();
    const key = await t.key();
    t.container.requestMetrics.record(answered({ latencyMs: 20 }));
    t.container.requestMetrics.record(answered({ latencyMs: 20, status: 404 }));
    // The first answer sees the two requests above; the second also the first (measured once answered).
    for (const [query, headers, avg] of [['timeframe=1h&format=csv', {}, '20'], ['timeframe=1h', { accept: 'application/csv' }, undefined]] as const) {
      const res = await report(key, query, headers);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/csv; charset=utf-8');
      const rows = parse(res.body, { columns: true }) as Record<string, string>[];
      expect(rows).toHaveLength(60);
      expect(Object.keys(rows[0]!)).toEqual(['timestamp', 'memory_operations', 'search_queries', 'response_time_avg_ms',
        'response_time_p50_ms', 'response_time_p95_ms', 'response_time_p99_ms', 'errors', 'cost']);
      expect(rows[0]).toMatchObject({ timestamp: iso(Date.UTC(2026, 0, 7, 9, 31)), errors: '0', response_time_p50_ms: '' });
      expect(rows.at(-1)).toMatchObject({ errors: '1' });
      if (avg) expect(rows.at(-1)!.response_time_avg_ms).toBe(avg);
    }
    const narrow = await report(key, 'timeframe=1h&format=csv&metrics=search_queries');
    expect(Object.keys((parse(narrow.body, { columns: true }) as Record<string, string>[])[0]!)).toEqual(['timestamp', 'search_queries']);
    // format=json wins over Accept.
    expect(json(await report(key, 'format=json', { accept: 'application/csv' })).success).toBe(true);
  });
});
