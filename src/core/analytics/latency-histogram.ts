/**
 * Fixed log-spaced latency buckets, so that histograms from any process, minute or flush can be added together and
 * p50 / p95 / p99 estimated from the sum. Bucket 0 holds [0, FIRST_BOUND_MS); bucket i ≥ 1 holds
 * [FIRST_BOUND_MS·RATIO^(i−1), FIRST_BOUND_MS·RATIO^i); the last bucket is open-ended.
 *
 * Error bound: an estimate is the geometric middle of the bucket holding the wanted rank, so for latencies of at
 * least FIRST_BOUND_MS it is within a factor √RATIO (≈ 1.0905, i.e. ±9.1 %) of a latency of that bucket; below it,
 * within FIRST_BOUND_MS / 2 (0.25 ms) absolute. The rank itself is exact (nearest-rank definition).
 */
export const FIRST_BOUND_MS = 0.5;
export const RATIO = 2 ** 0.25;
/** Bucket 80's lower bound is 0.5 ms · 2^19.75 ≈ 7.3 min: anything slower is counted there. */
export const BUCKETS = 81;

/** A sparse histogram: bucket index (as a string, JSON-friendly) → count. */
export type LatencyHistogram = Record<string, number>;

export function bucketOf(ms: number): number {
  if (!(ms >= FIRST_BOUND_MS)) return 0;
  const i = Math.floor(Math.log(ms / FIRST_BOUND_MS) / Math.log(RATIO)) + 1;
  return Math.min(BUCKETS - 1, Math.max(1, i));
}

/** The value reported for a bucket: its geometric middle (bucket 0: half its width). */
export function representative(bucket: number): number {
  if (bucket <= 0) return FIRST_BOUND_MS / 2;
  return FIRST_BOUND_MS * RATIO ** (bucket - 0.5);
}

export function addLatency(h: LatencyHistogram, ms: number, count = 1): void {
  const k = String(bucketOf(ms));
  h[k] = (h[k] ?? 0) + count;
}

export function mergeHistogram(into: LatencyHistogram, from: LatencyHistogram): void {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
}

/** How many latencies the histogram holds. */
export const histogramCount = (h: LatencyHistogram): number => Object.values(h).reduce((s, n) => s + n, 0);

/** The nearest-rank percentile estimate (ms), or null for an empty histogram. */
export function percentile(h: LatencyHistogram, p: number): number | null {
  const entries = Object.entries(h).map(([k, n]) => [Number(k), n] as const).filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [bucket, n] of entries) {
    seen += n;
    if (seen >= rank) return representative(bucket);
  }
  return representative(entries[entries.length - 1]![0]);
}
