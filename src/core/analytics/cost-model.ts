/**
 * Unit prices of the G7 cost model (configured by MNEMO_COST_*; the defaults are examples, not anyone's prices).
 * storage: per GB (2^30 bytes of memory title + content) per 30-day month, prorated over the period;
 * compute: per second of request time (the sum of measured latencies); apiCalls: per 1,000 answered requests;
 * llm: per million tokens (prompt and completion together) of the chat model ingestion's `extract` mode calls.
 */
export interface UnitPrices {
  storagePerGbMonth: number;
  computePerSecond: number;
  apiCallsPer1000: number;
  llmPer1MTokens: number;
}

export const EXAMPLE_UNIT_PRICES: UnitPrices = { storagePerGbMonth: 0.25, computePerSecond: 0.0001, apiCallsPer1000: 0.01, llmPer1MTokens: 0.5 };

export const MONTH_MS = 30 * 24 * 3_600_000;
const GB = 1024 ** 3;

export interface CostBreakdown { storage: number; compute: number; api_calls: number; llm: number; total: number }

/** Money rounded to 6 decimals: small test traffic still shows. */
export const money = (x: number): number => Math.round(x * 1e6) / 1e6;

export function costOf(prices: UnitPrices,
  usage: { storedBytes: number; periodMs: number; latencyMs: number; requests: number; llmTokens: number }): CostBreakdown {
  const storage = (usage.storedBytes / GB) * prices.storagePerGbMonth * (usage.periodMs / MONTH_MS);
  const compute = (usage.latencyMs / 1000) * prices.computePerSecond;
  const apiCalls = (usage.requests / 1000) * prices.apiCallsPer1000;
  const llm = (usage.llmTokens / 1_000_000) * prices.llmPer1MTokens;
  return {
    storage: money(storage), compute: money(compute), api_calls: money(apiCalls), llm: money(llm),
    total: money(storage + compute + apiCalls + llm),
  };
}

/** The period's cost extended to a 30-day month at the same rate. */
export function projectedMonthlyCost(total: number, periodMs: number): number {
  return periodMs > 0 ? money(total * (MONTH_MS / periodMs)) : 0;
}
