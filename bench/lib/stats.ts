/** Order statistics for small samples (nearest-rank on a sorted copy). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** Formats a number for a table: enough significant digits to compare, no more. */
export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 100) return value.toFixed(Math.max(0, digits - 2));
  if (Math.abs(value) >= 10) return value.toFixed(Math.max(0, digits - 1));
  return value.toFixed(digits);
}

/** 1000 -> "1k", 100000 -> "100k". */
export function compactCount(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}k`;
  return String(n);
}
