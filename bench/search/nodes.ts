/**
 * `npm run bench:nodes`: G1 search throughput of one node against two nodes on one PostgreSQL database and one Redis
 * (issue 39, point 3), with the CPU of each node, of the database's backends and of the load generator per phase.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { promisify } from 'node:util';
import { Command, InvalidArgumentError } from 'commander';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { jsonHeaders, postJson, SEARCH_PATH, timedClient } from '../http/client.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { searchQueries } from '../lib/corpus.ts';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { roundTripsBetween, startRoundTripCounter } from '../lib/pg-round-trips.ts';
import { cpuBetween, postgresCpu } from '../lib/postgres-cpu.ts';
import { createServerDatabase, startPglite, type PostgresHandle } from '../lib/postgres.ts';
import { threadTimes, type ThreadTimes } from '../lib/process-cpu.ts';
import { log, phase } from '../lib/progress.ts';
import { seedPostgresWorkspace } from '../lib/seed-postgres.ts';
import { REPO_ROOT, startServer, type ServerHandle } from '../lib/server.ts';
import { splitLoad, type SplitLoadResult } from '../lib/split-load.ts';
import { fmt, median } from '../lib/stats.ts';

const execFileAsync = promisify(execFile);

const positive = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
  return n;
};

const program = new Command('bench:nodes')
  .description('G1 search throughput (req/s, p50, p99) of one node against two nodes sharing one PostgreSQL database and one Redis, ' +
    'the same clients split evenly, in interleaved rounds; with the CPU of the nodes, the database and the load generator per phase.\n' +
    'Markdown goes to stdout, progress to stderr.')
  .option('--database-url <url>', 'a PostgreSQL server (pgvector installed, CREATEDB): a new database on it per run, dropped after; ' +
    'without it, PGlite in a child process behind pglite-socket (one session: it serialises both nodes, so it shows the plumbing, not the scaling)')
  .option('--keep-database', 'with --database-url: leave the database on the server (its URL is logged)')
  .option('--redis-url <url>', 'this Redis instead of a redis-server the bench starts on a free loopback port')
  .option('--memories <n>', 'memories in the one workspace (hashing embedder, 512 dims)', positive, 10_000)
  .option('--connections <n>', 'keep-alive clients: all on one node, then split evenly over two', positive, 8)
  .option('--duration <s>', 'measured seconds per phase', positive, 10)
  .option('--warmup <s>', 'unrecorded seconds of load on each pair of nodes before the rounds', positive, 3)
  .option('--rounds <n>', 'rounds of (one node, two nodes) per variant, in alternating order', positive, 3)
  .option('--searches <n>', 'sequential searches on a relayed node that count the database round trips per search', positive, 200)
  .option('--no-pinned', 'skip the variant with each node pinned to a core of its own (taskset) and one scan thread')
  .option('--quick', 'a smoke run: 1,000 memories, 2 s phases, 1 s warm-up, one round, 50 counted searches')
  .option('--write', 'replace the "Two nodes on one PostgreSQL server (issue 39)" section of BENCHMARKS.md (needs --database-url; not with --quick)')
  .showHelpAfterError()
  .parse();

const opts = program.opts<{
  databaseUrl?: string; keepDatabase?: boolean; redisUrl?: string; memories: number; connections: number; duration: number;
  warmup: number; rounds: number; searches: number; pinned: boolean; quick?: boolean; write?: boolean;
}>();
if (opts.write && (opts.quick || !opts.databaseUrl)) program.error('--write records reference figures: it needs --database-url and no --quick');
if (opts.connections % 2 !== 0) program.error('--connections must be even: the two-node phase gives each node half');
const given = (name: string) => program.getOptionValueSource(name) === 'cli';
const size = opts.quick && !given('memories') ? 1000 : opts.memories;
const duration = opts.quick && !given('duration') ? 2 : opts.duration;
const warmup = opts.quick && !given('warmup') ? 1 : opts.warmup;
const rounds = opts.quick && !given('rounds') ? 1 : opts.rounds;
const countedSearches = opts.quick && !given('searches') ? 50 : opts.searches;
const cores = availableParallelism();
const pinned = opts.pinned && cores >= 2;
if (opts.pinned && !pinned) log('one core only: the pinned variant is skipped');

const DIMS = 512;
const queries = searchQueries(7, 200);
let nextQuery = 0;
const searchBody = () => JSON.stringify({ query: queries[nextQuery++ % queries.length], limit: 10, threshold: 0 });

/** A node of the deployment under test, and where it runs. */
interface Node { name: string; server: ServerHandle; core?: number }
interface Variant { name: string; describe: string; nodes: [Node, Node] }

interface CpuUse {
  /**
   * Seconds per wall second of each node measured: CPU of its main thread and of every other thread, and time its
   * threads spent runnable but waiting for a core.
   */
  nodes: { main: number; other: number; wait: number }[];
  /** The database's backends (the PGlite process for PGlite): CPU and waiting for a core; every postgres process's CPU. */
  database: number;
  databaseWait: number;
  allPostgres: number | undefined;
  bench: number;
  /** Transactions the database committed or rolled back during the phase (pg_stat_database). */
  commits: number;
}
interface PhaseRow { variant: string; nodes: 1 | 2; round: number; result: SplitLoadResult; cpu: CpuUse; load: number }

const started = Date.now();
let database: PostgresHandle | undefined;
let redis: { url: string; stop(): Promise<void> } | undefined;
const servers: ServerHandle[] = [];
let stats: pg.Client | undefined;
try {
  // PGlite's start (WebAssembly, pgvector) took over a minute on the loaded 2-core machine: a generous limit.
  database = opts.databaseUrl ? await createServerDatabase(opts.databaseUrl, { keep: opts.keepDatabase, log }) : await startPglite(300_000);
  const databaseName = new URL(database.url).pathname.slice(1);
  const postgres = await database.describe();
  redis = opts.redisUrl ? { url: opts.redisUrl, stop: async () => undefined } : await startRedisServer();
  // One master key for the cluster (docs/deploy.md); load shedding off, as a 503 would end a run meant to saturate;
  // a search timeout far above the default, as a node's first search (its cold load) on a loaded machine took over 10 s.
  const env = {
    MNEMO_SEARCH_TIMEOUT_MS: '120000', ...database.env, MNEMO_REDIS_URL: redis.url, MNEMO_MASTER_KEY: randomBytes(32).toString('base64'),
    MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0',
  };

  const { key } = await seedPostgresWorkspace(env, database, { size, dims: DIMS });
  const headers = jsonHeaders(key);
  const start = async (name: string, extra: Record<string, string> = {}, core?: number): Promise<Node> => {
    const server = await startServer('hashing', { env: { ...env, ...extra } });
    servers.push(server);
    // -a: every thread the process has; the scan workers it starts later inherit the affinity of their parent.
    if (core !== undefined) await execFileAsync('taskset', ['-a', '-p', '-c', String(core), String(server.pid)]);
    return { name, server, ...(core !== undefined ? { core } : {}) };
  };
  const variants: Variant[] = [{
    name: 'unpinned', describe: `each node free on all ${cores} cores, MNEMO_SEARCH_THREADS default (${Math.min(16, cores)})`,
    nodes: [await start('U1'), await start('U2')],
  }];
  if (pinned) {
    variants.push({
      name: 'pinned', describe: 'node 1 on core 0, node 2 on core 1 (taskset), MNEMO_SEARCH_THREADS=1; PostgreSQL, Redis and the clients unpinned',
      nodes: [await start('P1', { MNEMO_SEARCH_THREADS: '1' }, 0), await start('P2', { MNEMO_SEARCH_THREADS: '1' }, 1)],
    });
  }
  for (const v of variants) {
    for (const n of v.nodes) {
      // The first search loads the workspace's vectors: done here, once, not inside a measured phase.
      await postJson(n.server.url, SEARCH_PATH, key, JSON.parse(searchBody()) as unknown, 200);
      if (n.core !== undefined) log(`${n.name}: ${await affinity(n.server.pid)}`);
    }
    log(`warm-up: ${v.name}, two nodes`);
    const warm = await splitLoad(v.nodes.map((n) => ({ url: n.server.url, connections: opts.connections / 2 })), { path: SEARCH_PATH, headers, nextBody: searchBody, durationSeconds: warmup });
    assertClean(`${v.name} warm-up`, warm);
  }

  const roundTrips = await countRoundTrips(database.url, env, key);
  stats = new pg.Client({ connectionString: database.url });
  await stats.connect();
  const db = { name: databaseName, pid: database.pid, stats };
  const rows: PhaseRow[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternating orders: whatever drifts during a round (other work on the machine, caches) does not favour one side.
    const order = round % 2 === 1 ? variants : [...variants].reverse();
    for (const v of order) {
      for (const count of round % 2 === 1 ? [1, 2] as const : [2, 1] as const) {
        const nodes = v.nodes.slice(0, count);
        const bar = phase(`round ${round}/${rounds}: ${v.name}, ${count} node${count === 1 ? '' : 's'}`, duration, 's');
        const before = await cpuReading(nodes, db);
        const result = await splitLoad(nodes.map((n) => ({ url: n.server.url, connections: opts.connections / count })), {
          path: SEARCH_PATH, headers, nextBody: searchBody, durationSeconds: duration,
        });
        const after = await cpuReading(nodes, db);
        bar.stop(`${fmt(result.perSecond, 0)} req/s`);
        assertClean(`${v.name} ${count}`, result);
        rows.push({ variant: v.name, nodes: count, round, result, cpu: cpuUse(nodes, before, after), load: loadavg()[0] ?? 0 });
      }
    }
  }

  const body = report({ rows, variants, postgres, roundTrips });
  process.stdout.write(`${body}\n`);
  if (opts.write) {
    await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'nodes', title: 'Two nodes on one PostgreSQL server (issue 39)', body }]);
  }
} finally {
  await stats?.end();
  for (const s of servers) await s.dispose();
  await redis?.stop();
  await database?.stop();
}

/** Round trips per search of the relayed node (bench/lib/pg-round-trips.ts), by statement. */
interface RoundTrips { searches: number; database: number; databaseMs: number; redis: number; statements: { sql: string; perSearch: number; msEach: number }[] }

/**
 * Database round trips and Redis commands per G1 search: a further node whose database connections pass through a
 * counting relay answers `countedSearches` searches one after another; what it and Redis do while idle for as long is
 * subtracted (outbox and event polling).
 */
async function countRoundTrips(databaseUrl: string, env: Record<string, string>, key: string): Promise<RoundTrips> {
  const relay = await startRoundTripCounter(databaseUrl);
  const server = await startServer('hashing', { env: { ...env, MNEMO_DATABASE_URL: relay.url } });
  const client = timedClient(server.url, key, 1);
  const redisClient = new Redis(env.MNEMO_REDIS_URL!, { lazyConnect: true });
  await redisClient.connect();
  const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await redisClient.info('stats'))![1]);
  try {
    for (let i = 0; i < 5; i++) await search(client);
    const t0 = performance.now();
    const [db0, r0] = [relay.statements(), await redisCommands()];
    for (let i = 0; i < countedSearches; i++) await search(client);
    const elapsed = performance.now() - t0;
    const [db1, r1] = [relay.statements(), await redisCommands()];
    await new Promise((resolve) => setTimeout(resolve, elapsed));
    const [db2, r2] = [relay.statements(), await redisCommands()];
    const busy = roundTripsBetween(db0, db1);
    const idle = roundTripsBetween(db1, db2);
    const statements = [...busy].map(([sql, b]) => {
      const count = b.count - (idle.get(sql)?.count ?? 0);
      return { sql, perSearch: count / countedSearches, msEach: b.ms / b.count };
    }).filter((x) => x.perSearch >= 0.05).sort((a, b) => b.perSearch - a.perSearch);
    return {
      searches: countedSearches,
      database: statements.reduce((a, x) => a + x.perSearch, 0),
      databaseMs: statements.reduce((a, x) => a + x.perSearch * x.msEach, 0),
      // Each interval's own INFO call counts once in each: they cancel.
      redis: (r1 - r0 - (r2 - r1)) / countedSearches,
      statements,
    };
  } finally {
    redisClient.disconnect();
    client.close();
    await server.stop();
    await server.dispose();
    await relay.stop();
  }
}

async function search(client: ReturnType<typeof timedClient>): Promise<void> {
  const res = await client.call('POST', SEARCH_PATH, searchBody());
  if (res.status !== 200) throw new Error(`G1 search answered ${res.status}: ${res.text.slice(0, 300)}`);
}

async function affinity(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return `pid ${pid} allowed on CPUs ${/^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? '?'}`;
}

interface CpuReading {
  at: number; nodes: ThreadTimes[][]; database: Map<number, number>; databaseWait: Map<number, number>; allPostgres: Map<number, number> | undefined;
  bench: NodeJS.CpuUsage; commits: number;
}

async function cpuReading(nodes: Node[], db: { name: string; pid: number | undefined; stats: pg.Client }): Promise<CpuReading> {
  const pgCpu = db.pid === undefined ? await postgresCpu(db.name) : undefined;
  const pglite = db.pid === undefined ? [] : await threadTimes(db.pid);
  const { rows } = await db.stats.query<{ commits: string }>(
    'SELECT xact_commit + xact_rollback AS commits FROM pg_stat_database WHERE datname = current_database()');
  return {
    at: performance.now(),
    nodes: await Promise.all(nodes.map((n) => threadTimes(n.server.pid))),
    database: pgCpu?.database ?? new Map(pglite.map((t) => [t.tid, t.runNs / 1e9])),
    databaseWait: pgCpu?.databaseWait ?? new Map(pglite.map((t) => [t.tid, t.waitNs / 1e9])),
    allPostgres: pgCpu?.all,
    bench: process.cpuUsage(),
    commits: Number(rows[0]?.commits ?? Number.NaN),
  };
}

function cpuUse(nodes: Node[], before: CpuReading, after: CpuReading): CpuUse {
  const seconds = (after.at - before.at) / 1000;
  return {
    nodes: nodes.map((n, i) => {
      const start = new Map(before.nodes[i]!.map((t) => [t.tid, t]));
      const use = { main: 0, other: 0, wait: 0 };
      for (const t of after.nodes[i]!) {
        const run = (t.runNs - (start.get(t.tid)?.runNs ?? 0)) / 1e9 / seconds;
        use.wait += (t.waitNs - (start.get(t.tid)?.waitNs ?? 0)) / 1e9 / seconds;
        if (t.tid === n.server.pid) use.main += run; else use.other += run;
      }
      return use;
    }),
    database: cpuBetween(before.database, after.database) / seconds,
    databaseWait: cpuBetween(before.databaseWait, after.databaseWait) / seconds,
    allPostgres: before.allPostgres && after.allPostgres ? cpuBetween(before.allPostgres, after.allPostgres) / seconds : undefined,
    bench: (after.bench.user - before.bench.user + after.bench.system - before.bench.system) / 1e6 / seconds,
    commits: after.commits - before.commits,
  };
}

function assertClean(label: string, r: SplitLoadResult): void {
  if (r.failures === 0 && r.requests === 0) {
    throw new Error(`${label}: no search was answered within the ${r.seconds} s phase (a busy machine, or PGlite's one session): give a longer --duration`);
  }
  if (r.failures > 0) {
    throw new Error(`${label}: ${r.failures} failed requests of ${r.requests + r.failures}; status codes ${JSON.stringify(r.statusCodes)}`);
  }
}

function report(o: { rows: PhaseRow[]; variants: Variant[]; postgres: string; roundTrips: RoundTrips }): string {
  const argv = process.argv.slice(2).map((arg) => (opts.databaseUrl ? arg.replace(opts.databaseUrl, 'URL') : arg));
  const loads = o.rows.map((r) => r.load);
  const half = opts.connections / 2;
  // Seconds per wall second over requests per second: milliseconds per search.
  const msPerSearch = (perSecond: number, r: PhaseRow) => (perSecond / r.result.perSecond) * 1000;
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const split = (r: PhaseRow) => ({
    main: msPerSearch(sum(r.cpu.nodes.map((n) => n.main)), r),
    other: msPerSearch(sum(r.cpu.nodes.map((n) => n.other)), r),
    database: msPerSearch(r.cpu.database, r),
    bench: msPerSearch(r.cpu.bench, r),
  });
  const nodeCpu = (c: { main: number; other: number } | undefined) => (c ? `${fmt(c.main, 2)} + ${fmt(c.other, 2)}` : '–');
  const phases = [
    '| variant | round | nodes | req/s | p50 ms | p99 ms | answers per node | CPU/s node 1 (main + other threads) | node 2 | database backends | all postgres | bench | ' +
      'CPU ms per search: nodes\' main / other threads / database / bench | waiting for a core, ms per search: nodes / database | commits per search | load (1 min) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |',
    ...o.rows.map((r) => {
      const c = split(r);
      return `| ${r.variant} | ${r.round} | ${r.nodes} | ${fmt(r.result.perSecond, 0)} | ${fmt(r.result.p50Ms)} | ${fmt(r.result.p99Ms)} | ${r.result.perTarget.join(' / ')} | ` +
        `${nodeCpu(r.cpu.nodes[0])} | ${nodeCpu(r.cpu.nodes[1])} | ${fmt(r.cpu.database, 2)} | ${r.cpu.allPostgres === undefined ? '–' : fmt(r.cpu.allPostgres, 2)} | ${fmt(r.cpu.bench, 2)} | ` +
        `${fmt(c.main)} / ${fmt(c.other)} / ${fmt(c.database)} / ${fmt(c.bench)} | ` +
        `${fmt(msPerSearch(sum(r.cpu.nodes.map((n) => n.wait)), r))} / ${fmt(msPerSearch(r.cpu.databaseWait, r))} | ${fmt(r.cpu.commits / r.result.requests)} | ${fmt(r.load, 1)} |`;
    }),
  ];
  // What the CPU alone would allow on this machine's cores with nothing else running, from the medians of the phases.
  const budget = [
    '| variant | nodes | CPU ms per search: nodes\' main threads / other threads / database / bench (medians) | all of it | ceiling on ' + cores + ' cores, req/s | ceiling of the nodes\' main threads, req/s |',
    '| --- | ---: | --- | ---: | ---: | ---: |',
    ...o.variants.flatMap((v) => ([1, 2] as const).map((count) => {
      const cs = o.rows.filter((r) => r.variant === v.name && r.nodes === count).map(split);
      const m = { main: median(cs.map((c) => c.main)), other: median(cs.map((c) => c.other)), database: median(cs.map((c) => c.database)), bench: median(cs.map((c) => c.bench)) };
      const all = m.main + m.other + m.database + m.bench;
      return `| ${v.name} | ${count} | ${fmt(m.main)} / ${fmt(m.other)} / ${fmt(m.database)} / ${fmt(m.bench)} | ${fmt(all)} | ${fmt((cores * 1000) / all, 0)} | ${fmt((count * 1000) / m.main, 0)} |`;
    })),
  ];
  const summary = [
    '| variant | one node req/s (median) | two nodes req/s (median) | two / one, by round | median two / one (target ≥ 1.6) |',
    '| --- | ---: | ---: | --- | ---: |',
    ...o.variants.map((v) => {
      const of = (n: 1 | 2) => o.rows.filter((r) => r.variant === v.name && r.nodes === n).sort((a, b) => a.round - b.round).map((r) => r.result.perSecond);
      const ratios = of(2).map((two, i) => two / of(1)[i]!);
      const ratio = median(ratios);
      return `| ${v.name} | ${fmt(median(of(1)), 0)} | ${fmt(median(of(2)), 0)} | ${ratios.map((x) => fmt(x, 2)).join(' / ')} | ${fmt(ratio, 2)}${ratio >= 1.6 ? '' : ' (missed)'} |`;
    }),
  ];
  return [
    `- Command: \`npm run bench:nodes -- ${argv.join(' ')}\``.replace(/ -- `$/, '`'),
    `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (took ${Math.round((Date.now() - started) / 1000)} s)`,
    `- Machine: ${machineLine(describeMachine())}; load average (1 min) during the phases ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}` +
      `${Math.max(...loads) > 6 ? ' (high: the figures are directional)' : ''}`,
    `- PostgreSQL: ${o.postgres}${opts.databaseUrl ? ` (${new URL(opts.databaseUrl).hostname}, on this machine)` : ''}; Redis: ${opts.redisUrl ? 'given' : 'a redis-server started by the bench on loopback'}`,
    '',
    `${size.toLocaleString('en')} memories (hashing, ${DIMS} dims) in one workspace, seeded straight into the database; every node is a real \`npm start\` ` +
    'server (dist/app/main.js) on MNEMO_DATABASE_URL and MNEMO_REDIS_URL, with MNEMO_MAX_EVENT_LOOP_DELAY_MS=0 (no load shedding) and MNEMO_SEARCH_TIMEOUT_MS=120000 (a cold load under other work can pass 10 s). ' +
    `G1 \`POST /api/v1/memories/search\` (limit 10, threshold 0: every memory scored), queries cycling through 200 generated questions, ${opts.connections} keep-alive ` +
    `autocannon clients in the bench process: all on node 1, or ${half} on each node; ${duration} s per phase after ${warmup} s of warm-up per pair of nodes, ` +
    `${rounds} round${rounds === 1 ? '' : 's'} with the order of variants and of one/two nodes alternating. Variants: ${o.variants.map((v) => `**${v.name}**: ${v.describe}`).join('; ')}.`,
    '',
    summary.join('\n'),
    '',
    'Each phase; CPU is CPU seconds per wall second from /proc (1.00 is a whole core): each node\'s main thread and the rest of its threads (scan workers, libuv, GC), ' +
    `the backends of the bench's database, every postgres process on the machine (other databases' work included), and the bench process (the clients); ` +
    'the time the nodes\' threads and the backends spent runnable but waiting for a core (/proc schedstat: what other work on the machine adds to each search), ' +
    'and the transactions the database committed (pg_stat_database, so approximate to its 1 s flush):',
    '',
    phases.join('\n'),
    '',
    'CPU per search, and what it allows: the ceiling on the cores is their CPU over all of it (PostgreSQL and the clients run here too); ' +
    'the main threads\' is one core per node over their share (each node\'s HTTP, JSON and query handling run on its one event loop).',
    '',
    budget.join('\n'),
    '',
    `Round trips per G1 search (${o.roundTrips.searches} searches one after another on a further node whose database connections pass through a counting relay, ` +
    `its idle traffic over as long subtracted): database ${fmt(o.roundTrips.database, 2)} (Query and Sync messages), taking ${fmt(o.roundTrips.databaseMs, 2)} ms ` +
    `from request to ReadyForQuery per search; Redis ${fmt(o.roundTrips.redis, 2)} commands. By statement (its start):`,
    '',
    '| statement | per search | ms each (request to ReadyForQuery) |',
    '| --- | ---: | ---: |',
    ...o.roundTrips.statements.map((x) => `| \`${x.sql.slice(0, 100).replaceAll('|', '\\|').replaceAll('`', "'")}${x.sql.length > 100 ? '…' : ''}\` | ${fmt(x.perSearch, 2)} | ${fmt(x.msEach, 2)} |`),
  ].join('\n');
}
