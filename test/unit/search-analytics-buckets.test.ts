import { describe, expect, it } from 'vitest';
import { bucketCount, bucketsOf, bucketStart, GRANULARITIES } from '../../src/core/search/search-analytics.ts';

const iso = (d: Date) => d.toISOString();

describe('search analytics buckets', () => {
  it('start on UTC hour, midnight, Monday and first-of-month boundaries', () => {
    const at = new Date('2026-03-01T23:59:59.999Z'); // a Sunday
    expect(iso(bucketStart(at, 'hour'))).toBe('2026-03-01T23:00:00.000Z');
    expect(iso(bucketStart(at, 'day'))).toBe('2026-03-01T00:00:00.000Z');
    expect(iso(bucketStart(at, 'week'))).toBe('2026-02-23T00:00:00.000Z');
    expect(iso(bucketStart(new Date('2026-03-02T00:00:00.000Z'), 'week'))).toBe('2026-03-02T00:00:00.000Z');
    expect(iso(bucketStart(at, 'month'))).toBe('2026-03-01T00:00:00.000Z');
    expect(iso(bucketStart(new Date('2028-02-29T12:00:00Z'), 'month'))).toBe('2028-02-01T00:00:00.000Z');
  });

  it('cover the range without gaps, and bucketCount agrees with them', () => {
    const ranges: [string, string][] = [
      ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.001Z'], ['2025-12-15T10:30:00Z', '2026-02-03T00:00:00Z'],
      ['2026-03-29T00:30:00Z', '2026-03-29T05:00:00Z'], ['2025-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
      ['2026-01-31T23:00:00Z', '2026-03-01T00:00:00Z'], ['2024-12-31T12:00:00Z', '2025-01-06T00:00:00Z'],
    ];
    for (const [a, b] of ranges) {
      const from = new Date(a);
      const to = new Date(b);
      for (const g of GRANULARITIES) {
        const slices = bucketsOf(from, to, g);
        expect(slices.length, `${a} ${b} ${g}`).toBe(bucketCount(from, to, g));
        expect(slices[0]!.start <= from && slices[0]!.end > from).toBe(true);
        expect(slices.at(-1)!.end >= to && slices.at(-1)!.start < to).toBe(true);
        for (let i = 1; i < slices.length; i++) expect(slices[i]!.start.getTime()).toBe(slices[i - 1]!.end.getTime());
      }
    }
  });
});
