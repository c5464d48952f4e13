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
