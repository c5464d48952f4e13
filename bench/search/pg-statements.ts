/**
 * Where a PostgreSQL server's time goes per search request (issue 39): for each search surface under autocannon load,
 * the statements pg_stat_statements saw in the bench's own database (calls, execution time and rows per request),
 * the CPU of that database's backends per request, and the round trips one request makes (a node behind a counting
 * relay, sequential requests). Markdown to stdout, progress to stderr.
 *
 * `npx tsx bench/search/pg-statements.ts --database-url URL` (the server needs pg_stat_statements loaded and its
 * extension created in the URL's database; the bench resets the statistics of its own database only).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { assertClean, measure } from '../http/load.ts';
import { searchQueries } from '../lib/corpus.ts';
import { roundTripsBetween, startRoundTripCounter } from '../lib/pg-round-trips.ts';
import { cpuBetween, postgresCpu } from '../lib/postgres-cpu.ts';
import { processCpuSeconds } from '../lib/process-cpu.ts';
import { createServerDatabase, type PostgresHandle } from '../lib/postgres.ts';
import { log } from '../lib/progress.ts';
import { seedPostgresWorkspace } from '../lib/seed-postgres.ts';
import { envList, startServer, type ServerHandle } from '../lib/server.ts';
import { fmt } from '../lib/stats.ts';

const positive = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
  return n;
};

const program = new Command('pg-statements')
  .description('per search surface: the statements a PostgreSQL server ran per request (pg_stat_statements), its backends\' CPU per request, and round trips per request')
  .requiredOption('--database-url <url>', 'a PostgreSQL server with pgvector and pg_stat_statements (CREATEDB): a new database on it, dropped after')
  .option('--memories <n>', 'memories in the one workspace (hashing embedder, 512 dims)', positive, 10_000)
  .option('--connections <list>', 'autocannon connections, one measured pass per value', '1,8')
  .option('--duration <s>', 'measured seconds per surface', positive, 5)
  .option('--warmup <s>', 'unrecorded seconds per surface first', positive, 2)
  .option('--requests <n>', 'sequential requests per surface on the relayed node that count round trips', positive, 100)
  .option('--surfaces <list>', 'which surfaces (g1, g3, g4get, g4vector)', 'g1,g3,g4get,g4vector')
  .option('--keep-database', 'leave the database on the server (its URL is logged), e.g. for EXPLAIN')
  .option('--env <list>', 'extra server settings NAME=VALUE, comma-separated (e.g. an A/B switch)', '')
  .showHelpAfterError()
  .parse();
const opts = program.opts<{ databaseUrl: string; keepDatabase?: boolean; memories: number; connections: string; duration: number; warmup: number; requests: number; surfaces: string; env: string }>();
const DIMS = 512;
const queries = searchQueries(7, 200);
let next = 0;
const nextQuery = () => queries[next++ % queries.length]!;
const extraEnv = envList(opts.env);

interface Surface { id: string; name: string; method: 'GET' | 'POST'; path: () => string; body: () => string }
/** G4 vector search's bodies: the first 50 questions' vectors from POST /v1/embeddings, filled once the server runs. */
const vectorBodies: string[] = [];
const vectorBody = () => vectorBodies[next++ % vectorBodies.length]!;
const SURFACES: Surface[] = [
  { id: 'g1', name: 'G1 POST /api/v1/memories/search', method: 'POST', path: () => '/api/v1/memories/search', body: () => JSON.stringify({ query: nextQuery(), limit: 10, threshold: 0 }) },
  { id: 'g3', name: 'G3 POST /api/v1/search/hybrid', method: 'POST', path: () => '/api/v1/search/hybrid', body: () => JSON.stringify({ query: nextQuery(), topK: 10 }) },
  { id: 'g4get', name: 'G4 GET /v1/search', method: 'GET', path: () => `/v1/search?q=${encodeURIComponent(nextQuery())}&limit=10&similarity_threshold=0`, body: () => '' },
  { id: 'g4vector', name: 'G4 POST /v1/search/vector', method: 'POST', path: () => '/v1/search/vector', body: vectorBody },
];
const surfaces = opts.surfaces.split(',').map((id) => SURFACES.find((s) => s.id === id.trim()) ?? program.error(`unknown surface ${id}`));

interface StatementRow { query: string; calls: number; totalMs: number; planMs: number; rows: number }
interface PassRow { surface: string; connections: number; requests: number; perSecond: number; p50Ms: number; backendCpuMs: number; nodeCpuMs: number; execMs: number; planMs: number; statements: StatementRow[]; load: number }

let database: PostgresHandle | undefined;
const servers: ServerHandle[] = [];
let stats: pg.Client | undefined;
try {
  database = await createServerDatabase(opts.databaseUrl, { keep: opts.keepDatabase, log });
  const name = new URL(database.url).pathname.slice(1);
  const env = { MNEMO_SEARCH_TIMEOUT_MS: '120000', ...database.env, MNEMO_MASTER_KEY: randomBytes(32).toString('base64'), MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0', ...extraEnv };
  const { key } = await seedPostgresWorkspace(env, database, { size: opts.memories, dims: DIMS });
  stats = new pg.Client({ connectionString: database.url });
  await stats.connect();
  await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const [{ dbid }] = (await stats.query<{ dbid: number }>('SELECT oid::int AS dbid FROM pg_database WHERE datname = current_database()')).rows as [{ dbid: number }];
  // Planning time too, for this node's sessions only (a session setting of a superuser's connection).
  const tracked = new URL(database.url);
  tracked.searchParams.set('options', '-c pg_stat_statements.track_planning=on');
  const server = await startServer('hashing', { env: { ...env, MNEMO_DATABASE_URL: tracked.toString() } });
  servers.push(server);
  for (const text of queries.slice(0, 50)) {
    const res = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
    if (res.status !== 200) throw new Error(`POST /v1/embeddings answered ${res.status}`);
    const { data } = await res.json() as { data: { embedding: number[] } };
    vectorBodies.push(JSON.stringify({ vector: data.embedding, limit: 10, similarity_threshold: 0 }));
  }
  const passes: PassRow[] = [];
  for (const connections of opts.connections.split(',').map(Number)) {
    for (const s of surfaces) {
      const load = { label: `${s.id} ×${connections}`, baseUrl: server.url, apiKey: key, connections, method: s.method, path: s.path(), nextPath: s.path, nextBody: s.body, headers: { authorization: `Bearer ${key}` } };
      await measure({ ...load, durationSeconds: opts.warmup, warmupSeconds: 0 });
      await stats.query('SELECT pg_stat_statements_reset(0, $1, 0)', [dbid]);
      const cpu0 = await postgresCpu(name);
      const node0 = await processCpuSeconds(server.pid);
      const result = await measure({ ...load, durationSeconds: opts.duration, warmupSeconds: 0 });
      // The searches' log rows and events are written in batches up to 100 ms after the answers.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cpu1 = await postgresCpu(name);
      const node1 = await processCpuSeconds(server.pid);
      assertClean(s.name, result);
      const { rows } = await stats.query<{ query: string; calls: string; total: number; plan: number; rows: string }>(
        `SELECT query, calls, total_exec_time AS total, total_plan_time AS plan, rows FROM pg_stat_statements WHERE dbid = $1 AND query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC`, [dbid]);
      const statements = rows.map((r) => ({ query: r.query.replace(/\s+/g, ' ').trim(), calls: Number(r.calls), totalMs: r.total, planMs: r.plan, rows: Number(r.rows) }));
      passes.push({
        surface: s.name, connections, requests: result.requests, perSecond: result.perSecond, p50Ms: result.p50Ms, load: loadavg()[0] ?? 0,
        backendCpuMs: cpuBetween(cpu0.database, cpu1.database) * 1000 / result.requests, nodeCpuMs: (node1 - node0) * 1000 / result.requests,
        execMs: statements.reduce((a, x) => a + x.totalMs, 0) / result.requests, planMs: statements.reduce((a, x) => a + x.planMs, 0) / result.requests, statements,
      });
    }
  }
  const trips = await roundTrips(env, key, database.url);
  process.stdout.write(`${report(passes, trips)}\n`);
} finally {
  await stats?.end();
  for (const s of servers) await s.dispose();
  await database?.stop();
}

/** Round trips per request of each surface: a node behind the counting relay, sequential requests, its idle traffic over as long subtracted. */
async function roundTrips(env: Record<string, string>, key: string, url: string): Promise<{ surface: string; perRequest: number; statements: { sql: string; perRequest: number }[] }[]> {
  const relay = await startRoundTripCounter(url);
  const server = await startServer('hashing', { env: { ...env, MNEMO_DATABASE_URL: relay.url } });
  servers.push(server);
  const call = async (s: Surface) => {
    const res = await fetch(`${server.url}${s.path()}`, { method: s.method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(s.method === 'POST' ? { body: s.body() } : {}) });
    if (res.status !== 200) throw new Error(`${s.name} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  };
  const out = [];
  try {
    for (const s of surfaces) {
      for (let i = 0; i < 5; i++) await call(s);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const t0 = performance.now();
      const before = relay.statements();
      for (let i = 0; i < opts.requests; i++) await call(s);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const elapsed = performance.now() - t0;
      const busy = roundTripsBetween(before, relay.statements());
      const idleFrom = relay.statements();
      await new Promise((resolve) => setTimeout(resolve, elapsed));
      const idle = roundTripsBetween(idleFrom, relay.statements());
      const statements = [...busy].map(([sql, b]) => ({ sql, perRequest: (b.count - (idle.get(sql)?.count ?? 0)) / opts.requests }))
        .filter((x) => x.perRequest >= 0.005).sort((a, b) => b.perRequest - a.perRequest);
      out.push({ surface: s.name, perRequest: statements.reduce((a, x) => a + x.perRequest, 0), statements });
    }
  } finally {
    await server.stop();
    await relay.stop();
  }
  return out;
}

function report(passes: PassRow[], trips: Awaited<ReturnType<typeof roundTrips>>): string {
  const sql = (q: string) => `\`${q.slice(0, 90).replaceAll('|', '\\|').replaceAll('`', "'")}${q.length > 90 ? '…' : ''}\``;
  const lines = [
    `${opts.memories.toLocaleString('en')} memories (hashing, ${DIMS} dims), ${opts.duration} s per surface after ${opts.warmup} s of warm-up.`,
    '',
    '| surface | clients | req/s | p50 ms | node CPU ms / request | backend CPU ms / request | statements\' exec ms / request | planning ms / request | load average |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...passes.map((p) => `| ${p.surface} | ${p.connections} | ${fmt(p.perSecond, 0)} | ${fmt(p.p50Ms)} | ${fmt(p.nodeCpuMs)} | ${fmt(p.backendCpuMs)} | ${fmt(p.execMs, 3)} | ${fmt(p.planMs, 3)} | ${fmt(p.load, 1)} |`),
  ];
  for (const p of passes) {
    lines.push('', `${p.surface}, ${p.connections} client${p.connections === 1 ? '' : 's'} (${p.requests} requests):`, '',
      '| statement | calls / request | mean exec ms | mean planning ms | exec + planning ms / request | rows / call |', '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...p.statements.filter((x) => x.calls / p.requests >= 0.001).map((x) => `| ${sql(x.query)} | ${fmt(x.calls / p.requests, 3)} | ${fmt(x.totalMs / x.calls, 3)} | ${fmt(x.planMs / x.calls, 3)} | ${fmt((x.totalMs + x.planMs) / p.requests, 3)} | ${fmt(x.rows / x.calls, 1)} |`));
  }
  lines.push('', `Round trips per request (${opts.requests} sequential requests per surface on a node behind a counting relay, its idle traffic subtracted):`, '',
    '| surface | round trips / request | by statement (per request) |', '| --- | ---: | --- |',
    ...trips.map((t) => `| ${t.surface} | ${fmt(t.perRequest, 2)} | ${t.statements.map((x) => `${sql(x.sql.slice(0, 60))} ${fmt(x.perRequest, 2)}`).join('; ')} |`));
  return lines.join('\n');
}
