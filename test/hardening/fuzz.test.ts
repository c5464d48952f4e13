import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_ROUTES } from '../../fuzz/dashboard.ts';
import {
  fuzzDashboardRoutes, fuzzHttpRoutes, fuzzMcpRoutes, fuzzStreamRoutes, formatFailures, routesOf, type FuzzOptions, type RouteReport, type Target,
} from '../../fuzz/engine.ts';
import { controlSnapshot, seedFixtures } from '../../fuzz/fixtures.ts';
import { listenWithFuzzKeys } from '../../fuzz/listening-target.ts';
import { describeLogLine, ERROR_LOG_LEVEL, judge } from '../../fuzz/oracle.ts';
import { injectTransport } from '../../fuzz/transport.ts';
import { FULL_SIZES } from '../../fuzz/values.ts';
import { captureLogs, describeLogLines, WARN_LEVEL } from '../support/log-capture.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { countFromEnv, longTests } from '../support/test-depth.ts';
import { testStoreKind } from '../support/test-store.ts';

/**
 * Issue 8 point 11: a schema-driven fuzz of every route of /openapi.json (inject), the SSE routes and the
 * WebSocket routes (a real socket), with a fixed seed. `npm run fuzz -- --cases N --seed S` runs longer campaigns.
 */
const SEED = 20260801;
/**
 * `npm test`: 30 cases per route on SQLite; the PostgreSQL run (the `postgres` project) takes the first 15 of the same
 * seed: what it adds is the adapter's handling of hostile values. `npm run test:long` (MNEMO_TEST_LONG=1) runs 200
 * and 100, MNEMO_TEST_FUZZ_CASES any count; the full campaign is `npm run fuzz`. The counts keep `npm test` within its
 * 5-minute budget (docs/testing.md).
 */
const CASES = countFromEnv('MNEMO_TEST_FUZZ_CASES', longTests() ? (testStoreKind() === 'postgres' ? 100 : 200) : (testStoreKind() === 'postgres' ? 15 : 30));
/**
 * The MCP operations and the dashboard's routes take few cases in `npm test` (its budget is spent), ×4 in test:long;
 * `npm run fuzz` takes its --cases.
 */
const EXTRA_CASES = countFromEnv('MNEMO_TEST_FUZZ_CASES', (testStoreKind() === 'postgres' ? 4 : 8) * (longTests() ? 4 : 1));
const TIME_BOUND_MS = 5_000;
// Every route gets the full sizes (100 000-character strings without spaces included), as `npm run fuzz` sends.
const sizes = () => FULL_SIZES;

describe('fuzz: every route, hostile input', () => {
  let t: TestApp;
  let target: Target;
  let before: unknown;
  const reports: RouteReport[] = [];
  // Issue 35: an error-level log line is a failure of the case that caused it, like a 500.
  const logs = captureLogs('warn');
  let seen = 0;
  const serverProblems = () => {
    const lines = logs.atLeast(ERROR_LOG_LEVEL, seen);
    seen = logs.lines.length;
    return lines.map((l) => `logged: ${describeLogLine(l)}`);
  };
  const options = (cases: number): FuzzOptions => ({ cases, seed: SEED, timeBoundMs: TIME_BOUND_MS, sizes, serverProblems });

  beforeAll(async () => {
    t = await createTestApp({ server: logs.server });
    const { baseUrl, keys } = await listenWithFuzzKeys(t);
    const send = injectTransport(t.app);
    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as unknown;
    target = { send, baseUrl, keys, openapi, ids: await seedFixtures(send, keys) };
    before = await controlSnapshot(send, keys, target.ids);
    // Lines of the set-up are no case's; the last test still fails on them.
    seen = logs.lines.length;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the oracle catches what it looks for', () => {
    expect(judge({ status: 200, body: '{}', ms: 3 }, '', 1000)).toEqual([]);
    expect(judge({ status: 500, body: '{}', ms: 3 }, '', 1000)).toEqual(['status 500']);
    expect(judge({ status: 200, body: '{}', ms: 3000 }, '', 1000)).toHaveLength(1);
    expect(judge({ status: 400, body: 'Error: x\n    at parse (/app/src/a.ts:10:5)', ms: 1 }, '', 1000)).toHaveLength(2);
    expect(judge({ status: 400, body: 'SqliteError: near "x": syntax error SQLITE_ERROR', ms: 1 }, '', 1000)).toHaveLength(2);
    expect(judge({ status: 400, body: '{"title":"SELECT a FROM b"}', ms: 1 }, '{"title":"SELECT a FROM b"}', 1000)).toEqual([]);
  });

  it(`HTTP routes of /openapi.json: ${CASES} cases each, no 5xx, no hang, no stack trace or SQL`, async () => {
    const started = performance.now();
    const http = await fuzzHttpRoutes(target, options(CASES));
    reports.push(...http);
    if (process.env.FUZZ_DEBUG) for (const r of http) process.stderr.write(`${r.route} ${Math.round(r.ms)}ms ${JSON.stringify(r.statuses)}\n`);
    process.stderr.write(`fuzz: ${http.length} HTTP routes × ${CASES} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    expect(http.length).toBe(routesOf(target).http.length);
    expect(http.length).toBeGreaterThanOrEqual(35);
    for (const r of http) expect(r.cases, r.route).toBeGreaterThanOrEqual(CASES);
    expect(formatFailures(http)).toBe('');
  }, 300_000);

  it(`SSE and WebSocket routes: ${CASES} short connections each`, async () => {
    const started = performance.now();
    const streams = await fuzzStreamRoutes(target, options(CASES));
    reports.push(...streams);
    if (process.env.FUZZ_DEBUG) for (const r of streams) process.stderr.write(`${r.route} ${Math.round(r.ms)}ms ${JSON.stringify(r.statuses)}\n`);
    process.stderr.write(`fuzz: ${streams.length} stream routes × ${CASES} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    expect(streams.map((r) => r.route).sort()).toEqual(['GET /api/v1/stream', 'GET /v1/search/stream', 'WS /api/v1/analytics/stream', 'WS /v1/search/live']);
    expect(formatFailures(streams)).toBe('');
  }, 300_000);

  it(`MCP at /mcp, every JSON-RPC method and tool (hidden from /openapi.json): ${EXTRA_CASES} cases each`, async () => {
    const started = performance.now();
    const mcp = await fuzzMcpRoutes(target, options(EXTRA_CASES));
    reports.push(...mcp);
    if (process.env.FUZZ_DEBUG) for (const r of mcp) process.stderr.write(`${r.route} ${Math.round(r.ms)}ms ${JSON.stringify(r.statuses)}\n`);
    process.stderr.write(`fuzz: ${mcp.length} MCP operations × ${EXTRA_CASES} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    expect(mcp.map((r) => r.route)).toEqual(expect.arrayContaining(['MCP initialize', 'MCP tools/call memory_create', 'MCP resources/read', 'MCP batch']));
    expect(mcp.length).toBeGreaterThanOrEqual(16);
    expect(formatFailures(mcp)).toBe('');
  }, 300_000);

  it(`dashboard pages and forms, signed in and not (hidden from /openapi.json): ${EXTRA_CASES} cases each`, async () => {
    const started = performance.now();
    const dashboard = await fuzzDashboardRoutes(target, options(EXTRA_CASES));
    reports.push(...dashboard);
    if (process.env.FUZZ_DEBUG) for (const r of dashboard) process.stderr.write(`${r.route} ${Math.round(r.ms)}ms ${JSON.stringify(r.statuses)}\n`);
    process.stderr.write(`fuzz: ${dashboard.length} dashboard routes × ${EXTRA_CASES} cases in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    expect(dashboard).toHaveLength(DASHBOARD_ROUTES.length);
    expect(formatFailures(dashboard)).toBe('');
  }, 300_000);

  it("leaves the control tenant's data unchanged", async () => {
    expect(reports.length).toBeGreaterThan(0);
    expect(await controlSnapshot(target.send, target.keys, target.ids)).toEqual(before);
  });

  it('logged no line at error level or above while it ran; warnings are listed', () => {
    const warnings = logs.lines.filter((l) => l.level === WARN_LEVEL);
    if (warnings.length > 0) process.stderr.write(`fuzz: ${warnings.length} warn-level log lines:\n${describeLogLines(warnings.slice(0, 20))}\n`);
    expect(describeLogLines(logs.atLeast(ERROR_LOG_LEVEL))).toBe('');
  });
});
