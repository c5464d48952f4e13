import { describe, expect, it, onTestFinished } from 'vitest';
import { parseTimestamp } from '../../src/core/search/filters.ts';

/** Every surface's date filters go through parseTimestamp: the answer must not depend on the server's time zone. */
describe('parseTimestamp', () => {
  it('reads a date-time without a zone as UTC, whatever TZ the process runs in', () => {
    // Node reads TZ again when it changes: run as a server far from UTC would, or UTC would hide the bug.
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    onTestFinished(() => { if (zone === undefined) delete process.env.TZ; else process.env.TZ = zone; });
    expect(new Date('2026-03-01T12:00').toISOString()).toBe('2026-03-01T17:00:00.000Z');
    expect(parseTimestamp('2026-03-01T12:00')?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(parseTimestamp('2026-03-01 12:00:30.5')?.toISOString()).toBe('2026-03-01T12:00:30.500Z');
    expect(parseTimestamp('2026-03-01')?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseTimestamp('2026-03-01T12:00:00+02:00')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseTimestamp('2026-03-01T12:00:00Z')?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
  });

  it('refuses what is not ISO 8601', () => {
    for (const bad of ['yesterday', '2026-13-01', '01/03/2026', '2026-03-01T25:00', '']) expect(parseTimestamp(bad), bad).toBeNull();
  });
});
