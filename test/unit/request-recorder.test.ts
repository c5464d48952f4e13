import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { addLatency, bucketOf, percentile, RATIO, type LatencyHistogram } from '../../src/core/analytics/latency-histogram.ts';
import { createRequestRecorder, type AnsweredRequest } from '../../src/core/analytics/request-recorder.ts';
import type { RequestMetricRow } from '../../src/core/analytics/request-metrics.repository.ts';

const answered = (over: Partial<AnsweredRequest> = {}): AnsweredRequest => ({
  tenantId: 't1', mode: 'live', keyId: 'k1', userId: 'u1', surface: 'g1', route: 'GET /api/v1/memories/:id', status: 200,
  latencyMs: 10, bytesIn: 0, bytesOut: 100, ...over,
});

describe('latency histogram', () => {
  it('estimates percentiles of a known distribution within the documented bound (a factor √RATIO)', () => {
    const h: LatencyHistogram = {};
    const latencies = Array.from({ length: 100 }, (_, i) => i + 1); // 1 … 100 ms
    for (const ms of latencies) addLatency(h, ms);
    for (const [p, exact] of [[50, 50], [95, 95], [99, 99]] as const) {
      const estimate = percentile(h, p)!;
      expect(estimate / exact).toBeLessThanOrEqual(Math.sqrt(RATIO) + 1e-9);
      expect(exact / estimate).toBeLessThanOrEqual(Math.sqrt(RATIO) + 1e-9);
    }
    expect(percentile({}, 50)).toBeNull();
  });

  it('puts tiny, negative and huge latencies in the end buckets', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(-5)).toBe(0);
    expect(bucketOf(0.5)).toBe(1);
    expect(bucketOf(1e9)).toBe(80);
  });
});

describe('request recorder', () => {
  it('aggregates per (tenant, mode, surface, route, status class, key, user, minute) and writes one batch per flush', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
    const writes: RequestMetricRow[][] = [];
    const recorder = createRequestRecorder({ metrics: { append: async (rows) => { writes.push([...rows]); } }, clock });
    recorder.record(answered({ latencyMs: 10, bytesIn: 5 }));
    recorder.record(answered({ latencyMs: 30, status: 201 }));
    recorder.record(answered({ status: 404 }));
    recorder.record(answered({ tenantId: null, mode: null, keyId: null, userId: null, status: 401 }));
    clock.advance(60_000);
    recorder.record(answered());
    expect(writes).toEqual([]);
    await recorder.flush();
    expect(writes).toHaveLength(1);
    const rows = writes[0]!;
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({
      tenantId: 't1', mode: 'live', minute: new Date(Date.UTC(2026, 0, 1)), statusClass: 2, requests: 2, latencySumMs: 40,
      latencyMaxMs: 30, bytesIn: 5, bytesOut: 200,
    });
    expect(rows[2]).toMatchObject({ tenantId: '', mode: '', keyId: '', userId: '', statusClass: 4 });
    expect(rows[3]!.minute).toEqual(new Date(Date.UTC(2026, 0, 1, 0, 1)));
    await recorder.flush();
    expect(writes).toHaveLength(1);
  });

  it('stays bounded: past maxPending, new combinations fold into the (overflow) route', async () => {
    const writes: RequestMetricRow[][] = [];
    const recorder = createRequestRecorder({ metrics: { append: async (rows) => { writes.push([...rows]); } }, clock: new ManualClock(), maxPending: 3 });
    for (let i = 0; i < 10; i++) recorder.record(answered({ route: `GET /r${i}` }));
    expect(recorder.pendingCount).toBe(4);
    await recorder.stop();
    expect(writes[0]!.find((r) => r.route === '(overflow)')).toMatchObject({ requests: 7, keyId: '', userId: '' });
  });

  it('counts a stream (no latency) as a request but not in latencies', async () => {
    const writes: RequestMetricRow[][] = [];
    const recorder = createRequestRecorder({ metrics: { append: async (rows) => { writes.push([...rows]); } }, clock: new ManualClock() });
    recorder.record(answered({ latencyMs: 8 }));
    recorder.record(answered({ latencyMs: null }));
    await recorder.flush();
    expect(writes[0]![0]).toMatchObject({ requests: 2, latencySumMs: 8, latencyMaxMs: 8, histogram: { [String(bucketOf(8))]: 1 } });
  });

  it('drops a failed flush and reports it', async () => {
    const errors: unknown[] = [];
    const recorder = createRequestRecorder({
      metrics: { append: async () => { throw new Error('store down'); } }, clock: new ManualClock(), onError: (e) => errors.push(e),
    });
    recorder.record(answered());
    await recorder.flush();
    expect(errors).toHaveLength(1);
    expect(recorder.pendingCount).toBe(0);
  });
});
