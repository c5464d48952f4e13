/**
 * How hard the randomized tests (the route fuzz, the isolation property) push. `npm test` runs the short counts: enough
 * to catch a regression on its fixed seed within the team's 5-minute budget for `npm test` on a 2-core machine.
 * `npm run test:long` sets MNEMO_TEST_LONG=1 for the longer counts; MNEMO_TEST_FUZZ_CASES / MNEMO_TEST_PROPERTY_RUNS
 * set a count directly (a campaign beyond that: `npm run fuzz -- --cases N`).
 */
export const longTests = (): boolean => process.env.MNEMO_TEST_LONG === '1';

/** A whole number from the environment, or `fallback` when unset; anything else is a mistake worth failing on. */
export function countFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a whole number >= 1, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Whether a test that repeats one request tens to thousands of times runs in this process: always on SQLite, and on PostgreSQL
 * (the `postgres` project) only in `npm run test:long`. For tests whose loop exercises no store of its own: the quota
 * counters live in the rate limiter (memory or Redis, not the store), and what each request reads from the store (its
 * key) is the same on both adapters by the storage contract suite (test/storage/storage.contract.ts). Their other
 * assertions run on both stores in `npm test`.
 */
export const repeatsOnThisStore = (): boolean => process.env.MNEMO_TEST_STORE !== 'postgres' || longTests();

/**
 * Of a loop of `total` requests that spends an hourly quota (1,000 embedding requests), how many go over HTTP: all
 * in `npm run test:long`; in `npm test` the last `last`, the ones before spent directly through the limits service
 * the routes call (`t.container.limits`, as test/g11/errors.test.ts does for G11's 1,000), on the same clock. That
 * each request counts once against the quota, whatever it holds, is checked request by request elsewhere (e.g.
 * test/g5/errors.test.ts, "counts a request against the hourly limit (once)"); what stays over HTTP is the edge of
 * the quota: the last requests allowed, the first one refused, and the answer's figures.
 */
export const requestsOverHttp = (total: number, last = 10): number => (longTests() ? total : Math.min(total, last));
