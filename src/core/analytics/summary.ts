import { isoTimestamp, type Clock } from '../clock.ts';
import type { KeyMode } from '../scope.ts';
import type { UsageRepository } from './usage.repository.ts';

/**
 * The small analytics summary pushed by the G7 analytics stream and carried by `analytics.update` events. The full
 * G7 analytics API is separate; this one answers "what happened lately" for one tenant + mode, all workspaces.
 */
export interface AnalyticsSummary {
  total_memories: number;
  memory_operations: { creates: number; updates: number; deletes: number; total: number };
  searches: number;
  /** Mean execution time of the window's searches (ms, 2 decimals); 0 when there were none. */
  avg_search_time_ms: number;
  window: { start: string; end: string; seconds: number };
}

export type AnalyticsSummaryService = ReturnType<typeof createAnalyticsSummary>;

const round2 = (x: number): number => Math.round(x * 100) / 100;

export function createAnalyticsSummary(deps: { usage: UsageRepository; clock: Clock }) {
  return {
    /** The summary of the last `windowMs` milliseconds up to now (by the clock). */
    async summarize(tenantId: string, mode: KeyMode, windowMs: number): Promise<AnalyticsSummary> {
      const end = deps.clock.now();
      const start = new Date(end.getTime() - windowMs);
      const c = await deps.usage.counts(tenantId, mode, start, end);
      return {
        total_memories: c.totalMemories,
        memory_operations: { creates: c.creates, updates: c.updates, deletes: c.deletes, total: c.creates + c.updates + c.deletes },
        searches: c.searches,
        avg_search_time_ms: c.avgSearchMs === null ? 0 : round2(c.avgSearchMs),
        window: { start: isoTimestamp(start), end: isoTimestamp(end), seconds: Math.round(windowMs / 10) / 100 },
      };
    },
  };
}
