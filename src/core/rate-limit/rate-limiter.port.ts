/**
 * Counting port for rate limits: fixed windows per bucket. The in-process adapter serves one node; a Redis
 * adapter shares the counters across nodes.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends. */
  resetAt: Date;
  /** 0 when allowed. */
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Counts one hit against `bucket` in a window of `windowMs`, allowing at most `limit` per window. */
  hit(bucket: string, limit: number, windowMs: number): Promise<RateDecision>;
}
