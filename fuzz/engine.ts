import fc from 'fast-check';
import { casesFor, describeCase, type CaseContext, type FuzzCase } from './cases.ts';
import { pathValuesFor, type FixtureIds, type FuzzKeys } from './fixtures.ts';
import { judge, type Answer } from './oracle.ts';
import { operationsOf, routeName, type Operation } from './openapi.ts';
import { HangError, type Transport } from './transport.ts';
import { FULL_SIZES, type Sizes } from './values.ts';
import { fuzzSseCase, fuzzWsCase, WS_ROUTES } from './streams.ts';
import { withWordedSchemas } from './worded-schemas.ts';
import { mcpCases, mcpOperations } from './mcp.ts';
import { DASHBOARD_ROUTES, dashboardCases, dashboardProblems, dashboardRouteName, dashboardSessions } from './dashboard.ts';

/** Routes that answer with a stream that stays open: fuzzed over a real socket, never through inject. */
export const SSE_ROUTES = new Set(['GET /api/v1/stream', 'GET /v1/search/stream']);

export interface FuzzOptions {
  cases: number;
  seed: number;
  /** An answer slower than this is a hang. */
  timeBoundMs: number;
  /** Sizes of the hostile values for a route. */
  sizes?: (route: string) => Sizes;
  /** Only routes whose name contains this text. */
  only?: string;
  onCase?: (route: string) => void;
  /**
   * Called after a hang. Without it the run goes on (in process nothing else can be done); with it, the route's
   * remaining cases are skipped and the caller may replace the server (the target's fields) before the next route.
   */
  onHang?: () => Promise<void>;
  /**
   * What the server reported since the last call (its error-level log lines): drained after each case, and each
   * line is a problem of that case.
   */
  serverProblems?: () => string[];
}

export interface Failure {
  route: string;
  seed: number;
  index: number;
  problems: string[];
  request: string;
  answer: string;
}

export interface RouteReport {
  route: string;
  cases: number;
  ms: number;
  statuses: Record<string, number>;
  failures: Failure[];
  /** Cases not sent because the route hung before them. */
  skipped: number;
}

/** Each route gets its own seed, derived from the run's, so filtering routes never changes a route's cases. */
export function routeSeed(seed: number, route: string): number {
  let h = seed | 0;
  for (let i = 0; i < route.length; i++) h = (Math.imul(h ^ route.charCodeAt(i), 16777619) + 0x9e3779b9) | 0;
  return h;
}

export interface Target {
  /** HTTP routes (everything but streams). */
  send: Transport;
  /** Base URL of a listening server, for SSE and WebSocket routes. */
  baseUrl: string;
  keys: FuzzKeys;
  ids: FixtureIds;
  /** The OpenAPI document the server serves. */
  openapi: unknown;
}

export function contextFor(target: Target, sizes: (route: string) => Sizes): CaseContext {
  return {
    keys: target.keys.pool, freeKey: target.keys.free, readOnlyKey: target.keys.readOnly,
    pathValues: (op) => pathValuesFor(target.ids, op),
    sizes: (op) => sizes(routeName(op)),
  };
}

/** Labels for keys in reports ("<pool key 3>"), so that a report reads without secrets. */
export function keyLabeller(keys: FuzzKeys): (key: string) => string {
  return (key) => {
    const i = keys.pool.indexOf(key);
    if (i >= 0) return `<enterprise key ${i}>`;
    if (key === keys.free) return '<free key>';
    if (key === keys.readOnly) return '<read-only key>';
    if (key === keys.control) return '<control key>';
    return key;
  };
}

export function routesOf(target: Target, only?: string): { http: Operation[]; sse: Operation[]; ws: string[] } {
  const ops = operationsOf(target.openapi).map(withWordedSchemas).filter((op) => !only || routeName(op).includes(only));
  return {
    http: ops.filter((op) => !SSE_ROUTES.has(routeName(op))),
    sse: ops.filter((op) => SSE_ROUTES.has(routeName(op))),
    ws: Object.keys(WS_ROUTES).filter((r) => !only || r.includes(only)),
  };
}

type Runner = (c: FuzzCase) => Promise<Answer>;

/** Checks of an answer beyond the common oracle: the control tenant's secret never reaches the fuzz tenant. */
const controlSecretShown = (target: Target) => (a: Answer): string[] =>
  target.ids.control.secret && a.body.includes(target.ids.control.secret) ? ["the control tenant's secret value in the answer"] : [];

async function runCases(
  route: string, cases: FuzzCase[], run: Runner, o: FuzzOptions, label: (k: string) => string, extra: (a: Answer) => string[] = () => [],
): Promise<RouteReport> {
  const started = performance.now();
  const statuses: Record<string, number> = {};
  const failures: Failure[] = [];
  let skipped = 0;
  for (const [index, c] of cases.entries()) {
    let problems: string[];
    let answer = '';
    try {
      const a = await run(c);
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const sent = `${c.request.url}\n${c.request.body?.toString() ?? ''}\n${Object.values(c.request.headers).join('\n')}`;
      problems = [...judge(a, sent, o.timeBoundMs), ...extra(a)];
      answer = `${a.status} ${a.body.slice(0, 400)}`;
    } catch (err) {
      statuses.error = (statuses.error ?? 0) + 1;
      problems = [err instanceof HangError ? `hang: ${err.message}` : `no answer: ${err instanceof Error ? err.message : String(err)}`];
    }
    problems.push(...(o.serverProblems?.() ?? []));
    if (problems.length > 0) failures.push({ route, seed: o.seed, index, problems, request: describeCase(c, label), answer });
    o.onCase?.(route);
    if (o.onHang && problems.some((p) => p.startsWith('hang'))) {
      skipped = cases.length - index - 1;
      for (let i = 0; i < skipped; i++) o.onCase?.(route);
      await o.onHang();
      break;
    }
  }
  return { route, cases: cases.length - skipped, ms: performance.now() - started, statuses, failures, skipped };
}

const sample = (arb: fc.Arbitrary<FuzzCase>, seed: number, n: number) => fc.sample(arb, { seed, numRuns: n });

/** Every HTTP operation of the document: `o.cases` requests each, one after another. */
export async function fuzzHttpRoutes(target: Target, o: FuzzOptions): Promise<RouteReport[]> {
  const sizes = o.sizes ?? (() => FULL_SIZES);
  const reports: RouteReport[] = [];
  for (const op of routesOf(target, o.only).http) {
    const route = routeName(op);
    // Keys and ids are read per route: after a hang the caller may have replaced the server.
    const cases = sample(casesFor(op, contextFor(target, sizes)), routeSeed(o.seed, route), o.cases);
    reports.push(await runCases(route, cases, (c) => target.send(c.request, o.timeBoundMs * 3), o, keyLabeller(target.keys), controlSecretShown(target)));
  }
  return reports;
}

/** What the server logged while a run prepared (valid requests only) fails the run rather than its first case. */
function failOnServerProblems(o: FuzzOptions, what: string): void {
  const problems = o.serverProblems?.() ?? [];
  if (problems.length > 0) throw new Error(`${what}: ${problems.join('; ')}`);
}

/** Every MCP operation (fuzz/mcp.ts) at /mcp: `o.cases` JSON-RPC requests each. */
export async function fuzzMcpRoutes(target: Target, o: FuzzOptions): Promise<RouteReport[]> {
  const sizes = o.sizes ?? (() => FULL_SIZES);
  const reports: RouteReport[] = [];
  const ops = (await mcpOperations(target.send, target.keys.pool[0]!, target.ids)).filter((m) => !o.only || m.route.includes(o.only));
  failOnServerProblems(o, 'listing the MCP tools');
  for (const m of ops) {
    const cases = sample(mcpCases(m, contextFor(target, sizes)), routeSeed(o.seed, m.route), o.cases);
    reports.push(await runCases(m.route, cases, (c) => target.send(c.request, o.timeBoundMs * 3), o, keyLabeller(target.keys), controlSecretShown(target)));
  }
  return reports;
}

/** Every dashboard page and form (fuzz/dashboard.ts), signed in and not: `o.cases` requests each. */
export async function fuzzDashboardRoutes(target: Target, o: FuzzOptions): Promise<RouteReport[]> {
  const routes = DASHBOARD_ROUTES.filter((r) => !o.only || dashboardRouteName(r).includes(o.only));
  if (routes.length === 0) return [];
  const sessions = await dashboardSessions(target.send, target.keys);
  failOnServerProblems(o, 'signing in the dashboard sessions');
  const reports: RouteReport[] = [];
  for (const r of routes) {
    const route = dashboardRouteName(r);
    const cases = sample(dashboardCases(r, target.ids, sessions), routeSeed(o.seed, route), o.cases);
    reports.push(await runCases(route, cases, (c) => target.send(c.request, o.timeBoundMs * 3), o, keyLabeller(target.keys),
      (a) => dashboardProblems(a, target.ids.control.secret)));
  }
  return reports;
}

/** The SSE routes of the document and the WebSocket routes it hides, over real connections. */
export async function fuzzStreamRoutes(target: Target, o: FuzzOptions): Promise<RouteReport[]> {
  const sizes = o.sizes ?? (() => FULL_SIZES);
  const routes = routesOf(target, o.only);
  const reports: RouteReport[] = [];
  for (const op of routes.sse) {
    const route = routeName(op);
    const cases = sample(casesFor(op, contextFor(target, sizes)), routeSeed(o.seed, route), o.cases);
    reports.push(await runCases(route, cases, (c) => fuzzSseCase(target.baseUrl, c, o.timeBoundMs), o, keyLabeller(target.keys), controlSecretShown(target)));
  }
  for (const route of routes.ws) {
    const op = WS_ROUTES[route]!(target.keys);
    const cases = sample(casesFor(op, contextFor(target, sizes)), routeSeed(o.seed, route), o.cases);
    reports.push(await runCases(route, cases, (c) => fuzzWsCase(target.baseUrl, c, o.timeBoundMs), o, keyLabeller(target.keys)));
  }
  return reports;
}

/** A report of failures, grouped by route, each with its seed and a request that reproduces it. */
export function formatFailures(reports: RouteReport[], limitPerRoute = 5): string {
  const lines: string[] = [];
  for (const r of reports.filter((x) => x.failures.length > 0)) {
    lines.push(`${r.route}: ${r.failures.length} of ${r.cases} cases failed${r.skipped > 0 ? ` (then ${r.skipped} skipped after a hang)` : ''}`);
    for (const f of r.failures.slice(0, limitPerRoute)) {
      lines.push(`  case #${f.index} (seed ${f.seed}): ${f.problems.join('; ')}`, `  ${f.request.replaceAll('\n', '\n  ')}`);
      if (f.answer) lines.push(`  answer: ${f.answer.replaceAll('\n', '\\n')}`);
    }
  }
  return lines.join('\n');
}
