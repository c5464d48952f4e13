/**
 * `npm run fuzz`: the schema-driven fuzz of every route, MCP and the dashboard (the test suite runs the same engine
 * with fewer cases). The server runs in a child process; `--help` lists the options.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { log, phase } from '../bench/lib/progress.ts';
import { DASHBOARD_ROUTES, dashboardRouteName } from './dashboard.ts';
import { formatFailures, fuzzDashboardRoutes, fuzzHttpRoutes, fuzzMcpRoutes, fuzzStreamRoutes, routesOf, type RouteReport, type Target } from './engine.ts';
import { controlSnapshot, seedFixtures, type FuzzKeys } from './fixtures.ts';
import { mcpOperations } from './mcp.ts';
import { describeLogLine, ERROR_LOG_LEVEL } from './oracle.ts';
import { httpTransport } from './transport.ts';
import { FULL_SIZES } from './values.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Options { cases: number; seed: number; route?: string; timeBound: number; failures: number }

const whole = (min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`use a whole number >= ${min}`);
  return n;
};

/** The target's log lines at warn level or above, as they arrive: errors are drained after each case, warnings listed at the end. */
const logged = { errors: [] as string[], warnings: new Map<string, number>() };

async function startTarget() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'fuzz/target.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fuzz target exited with ${code} before listening`)));
  });
  lines.on('line', (text) => {
    const { log } = JSON.parse(text) as { log?: Record<string, unknown> };
    if (!log) return;
    if (Number(log.level) >= ERROR_LOG_LEVEL) logged.errors.push(`logged: ${describeLogLine(log)}`);
    else logged.warnings.set(String(log.msg), (logged.warnings.get(String(log.msg)) ?? 0) + 1);
  });
  const { url, keys } = JSON.parse(line) as { url: string; keys: FuzzKeys };
  return {
    url, keys,
    // A server stuck in a busy loop cannot run its SIGTERM handler: kill it.
    stop: (force = false) => new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      child.kill(force ? 'SIGKILL' : 'SIGTERM');
    }),
  };
}

/** A fresh server with its fixtures, and the control tenant's data as it starts. */
async function prepare() {
  const server = await startTarget();
  const send = httpTransport(server.url);
  const openapi = await (await fetch(`${server.url}/openapi.json`)).json() as unknown;
  const ids = await seedFixtures(send, server.keys);
  const target: Target = { send, baseUrl: server.url, keys: server.keys, ids, openapi };
  return { server, target, before: await controlSnapshot(send, server.keys, ids) };
}

async function run(o: Options): Promise<number> {
  let current = await prepare();
  const { target } = current;
  let restarts = 0;
  // After a hang the server may stay busy for minutes: replace it (the control check then covers the new one).
  const onHang = async () => {
    await current.server.stop(true);
    current = await prepare();
    Object.assign(target, current.target);
    restarts++;
  };
  try {
    const routes = routesOf(target, o.route);
    const mcp = (await mcpOperations(target.send, target.keys.pool[0]!, target.ids)).filter((m) => !o.route || m.route.includes(o.route));
    const dashboard = DASHBOARD_ROUTES.filter((r) => !o.route || dashboardRouteName(r).includes(o.route));
    const total = (routes.http.length + routes.sse.length + routes.ws.length + mcp.length + dashboard.length) * o.cases;
    log(`mnemo fuzz: seed ${o.seed}, ${o.cases} cases per route, ${total} in all${o.route ? ` (routes matching "${o.route}")` : ''}`);
    const bar = phase('fuzz', total, 'cases');
    const sizes = () => FULL_SIZES;
    // A line logged at error level is a failure of the case it followed (it may arrive a case late: another process).
    const serverProblems = () => logged.errors.splice(0);
    const common = { cases: o.cases, seed: o.seed, timeBoundMs: o.timeBound, sizes, only: o.route, onCase: () => bar.increment(), onHang, serverProblems };
    const reports: RouteReport[] = [
      ...await fuzzHttpRoutes(target, common), ...await fuzzStreamRoutes(target, common),
      ...await fuzzMcpRoutes(target, common), ...await fuzzDashboardRoutes(target, common),
    ];
    bar.stop();

    const after = await controlSnapshot(target.send, target.keys, target.ids);
    const controlChanged = JSON.stringify(after) !== JSON.stringify(current.before);
    process.stdout.write('| route | cases | time (s) | answers | failures |\n|---|---|---|---|---|\n');
    for (const r of reports) {
      const statuses = Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ');
      const skipped = r.skipped > 0 ? ` (+${r.skipped} skipped after a hang)` : '';
      process.stdout.write(`| ${r.route} | ${r.cases}${skipped} | ${(r.ms / 1000).toFixed(1)} | ${statuses} | ${r.failures.length} |\n`);
    }
    if (restarts > 0) process.stdout.write(`\nThe server hung and was replaced ${restarts} time(s).\n`);
    if (logged.warnings.size > 0) {
      process.stdout.write(`\nWarn-level log lines (client input should log at most info):\n`);
      for (const [msg, n] of logged.warnings) process.stdout.write(`  ${n}× ${msg.slice(0, 200)}\n`);
    }
    const failed = reports.filter((r) => r.failures.length > 0);
    if (failed.length > 0) process.stdout.write(`\n${formatFailures(reports, o.failures)}\n`);
    process.stdout.write(`\ncontrol tenant's data: ${controlChanged ? 'CHANGED' : 'unchanged'}\n`);
    process.stdout.write(`seed ${o.seed}: ${failed.length === 0 && !controlChanged ? 'no failure' : `${failed.reduce((n, r) => n + r.failures.length, 0)} failing cases`}\n`);
    return failed.length === 0 && !controlChanged ? 0 : 1;
  } finally {
    await current.server.stop();
  }
}

const program = new Command('npm run fuzz --')
  .description('Fuzz every route of /openapi.json, the SSE and the WebSocket routes, MCP at /mcp and the dashboard with hostile requests; report 5xx, hangs, leaked stack traces or SQL, error-level log lines, and changes to a control tenant.')
  .option('--cases <n>', 'cases per route', whole(1), 200)
  .option('--seed <s>', 'seed; case #i of a route is the same for a seed whatever --cases (above i) and --route', whole(0), Date.now() % 1_000_000_000)
  .option('--route <text>', 'only routes whose name ("POST /api/v1/memories/", "WS /v1/search/live", "MCP tools/call", "DASHBOARD POST") contains this text')
  .option('--time-bound <ms>', 'an answer slower than this is a hang', whole(1), 10_000)
  .option('--failures <n>', 'failing cases shown per route', whole(1), 5)
  .action(async (o: Options) => { process.exitCode = await run(o); });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  log(`fuzz FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
