/** Time as a port, so that limits, schedules and timestamps can be driven by tests. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests and benchmarks. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: Date | number): void {
    this.current = typeof at === 'number' ? at : at.getTime();
  }
}

/** ISO 8601 UTC with milliseconds and `Z` (docs/api.md, "Common to every surface"). */
export const isoTimestamp = (d: Date): string => d.toISOString();
