import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { analyticsClient } from './client.ts';

describe('G7 analytics: errors', () => {
  let t: TestApp;
  let ask: ReturnType<typeof analyticsClient>;
  beforeAll(async () => {
    t = await createTestApp();
    ask = analyticsClient(t.app, await t.key());
  });
  afterAll(() => t.close());

  it('answers INVALID_TIMEFRAME 400 with {field, valid_values}', async () => {
    for (const tf of ['2h', '', 'ALL', '1H']) {
      const res = await ask(`timeframe=${tf}`);
      expect(res.statusCode).toBe(400);
      const body = json(res);
      expect(body.success).toBe(false);
      expect(body.error).toMatchObject({ code: 'INVALID_TIMEFRAME', details: { field: 'timeframe', valid_values: ['1h', '24h', '7d', '30d', '90d'] } });
      expect(body.metadata).toEqual({ generated_at: expect.any(String), request_id: expect.any(String) });
    }
  });

  it('refuses bad group_by, format, metrics and dates with VALIDATION_ERROR naming the field', async () => {
    const cases: [query: string, details: Record<string, unknown>][] = [
      ['group_by=year', { field: 'group_by', valid_values: ['hour', 'day', 'week', 'month'] }],
      ['format=xml', { field: 'format', valid_values: ['json', 'csv'] }],
      ['metrics=total_memories,nope', { field: 'metrics', valid_values: expect.arrayContaining(['projected_cost', 'memory_operations']) }],
      ['start_date=yesterday&end_date=2026-01-01', { field: 'start_date', reason: 'invalid_date' }],
      ['start_date=2026-02-30T00:00:00Z&end_date=2026-03-01', { field: 'start_date', reason: 'invalid_date' }],
      ['start_date=2026-01-01', { field: 'end_date', reason: 'missing_required_field' }],
      ['end_date=2026-01-01', { field: 'start_date', reason: 'missing_required_field' }],
      ['start_date=2026-01-02&end_date=2026-01-01', { field: 'end_date', reason: 'end_before_start' }],
      ['start_date=2024-01-01&end_date=2026-01-01', { field: 'end_date', reason: 'range_too_long' }],
      ['timeframe=1h&start_date=2026-01-01&end_date=2026-01-02', { field: 'timeframe', reason: 'conflicts_with_dates' }],
      ['timeframe=1h&timeframe=24h', { field: 'timeframe', reason: 'invalid_value' }],
    ];
    for (const [query, details] of cases) {
      const res = await ask(query);
      expect(res.statusCode, query).toBe(400);
      expect(json(res).error, query).toMatchObject({ code: 'VALIDATION_ERROR', details });
    }
  });

  it('answers errors as JSON even when CSV is asked for', async () => {
    const res = await ask('timeframe=5m&format=csv');
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('INVALID_TIMEFRAME');
  });
});
