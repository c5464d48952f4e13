/**
 * `npm run bench:engine -- --database-url URL` (or `--store postgres` for PGlite in a child process): the engine
 * bench on PostgreSQL. One workspace seeded straight into the database, the server restarted on it; the first search
 * after `listening on`; one client G1 against pgvector's exact KNN in SQL on the same vectors, alternately first,
 * with recall@10 against an exact scan in this process; then concurrent clients with GET /health polled beside them;
 * the node's RSS against the raw float bytes. The SQLite figures come from the same command without a database.
 */
import { Command } from 'commander';
import pg from 'pg';
import { decodeVector } from '../../src/adapters/storage/postgres/pg-vector-index.ts';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { searchQueries } from '../lib/corpus.ts';
import {
  firstSearch, floatsMiB, recallAt10, recallCell, restartCells, searchesWithHealth, timedG1, withEngineOptions, type EngineOptions, type RestartFigures,
} from '../lib/engine-runs.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { createServerDatabase, startPglite, type PostgresHandle } from '../lib/postgres.ts';
import { log, phase } from '../lib/progress.ts';
import { seedPostgresWorkspace } from '../lib/seed-postgres.ts';
import { createEnterpriseKey, REPO_ROOT, startServer, type ServerHandle } from '../lib/server.ts';
import { compactCount, fmt, median, percentile } from '../lib/stats.ts';
import { postJson, SEARCH_PATH, timedClient } from '../http/client.ts';
import { normaliseInto, plainTopK } from '../scan/baseline.ts';

const program = withEngineOptions(new Command('bench:engine (PostgreSQL)'))
  .description('G1 on PostgreSQL vs pgvector exact KNN on the same vectors; clients with /health beside; cold start; RSS')
  .option('--database-url <url>', 'a PostgreSQL server with pgvector: each size gets a new database on it, dropped after')
  .option('--store <store>', 'postgres: without --database-url, PGlite in a child process', 'postgres')
  .option('--write', 'update the "Semantic search engine on PostgreSQL" section of BENCHMARKS.md')
  .parse();
const opts = program.opts<EngineOptions & { databaseUrl?: string; store: string; write?: boolean }>();
if (opts.store !== 'postgres') program.error('this bench runs on PostgreSQL only (bench/search/engine.ts runs SQLite)');
const sizes = opts.sizes.split(',').map((s) => Number(s.trim().replace(/k$/i, '000')));
const dims = Number(opts.dims);
const clients = Number(opts.clients);
const durationS = Number(opts.duration);

interface Row extends RestartFigures {
  size: number;
  g1Ms: number[];
  exactMs: number[];
  recalls: number[];
  seedS: number;
  concurrent: Awaited<ReturnType<typeof searchesWithHealth>>;
}

const openDatabase = (): Promise<PostgresHandle> => (opts.databaseUrl ? createServerDatabase(opts.databaseUrl, { log }) : startPglite());

function serverEnv(database: PostgresHandle): Record<string, string> {
  return {
    ...database.env, MNEMO_EMBEDDINGS_DIMENSIONS: String(dims), MNEMO_MAX_CONCURRENT_SEARCHES: '64',
    ...(opts.threads ? { MNEMO_SEARCH_THREADS: opts.threads } : {}),
  };
}

/** Every vector of the database, unit length, with its memory's id (for the exact scan in this process). */
async function readVectors(database: PostgresHandle, size: number): Promise<{ vectors: Float32Array; ids: string[] }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const out = new Float32Array(size * dims);
  const ids: string[] = [];
  try {
    for (let after = 0; ;) {
      const { rows } = await client.query<{ seq: string; id: string; vector: string }>(
        `SELECT v.memory_seq AS seq, m.id, encode(vector_send(v.embedding), 'base64') AS vector FROM memory_vectors v
         JOIN memories m ON m.seq = v.memory_seq WHERE v.memory_seq > $1 ORDER BY v.memory_seq LIMIT 10000`, [after]);
      for (const r of rows) {
        normaliseInto(decodeVector(r.vector, dims), out, ids.length * dims);
        ids.push(r.id);
        after = Number(r.seq);
      }
      if (rows.length < 10000) break;
    }
  } finally {
    await client.end();
  }
  if (ids.length !== size) throw new Error(`expected ${size} vectors in the database, found ${ids.length}`);
  return { vectors: out, ids };
}

async function runSize(size: number, baseRssMiB: number): Promise<Row> {
  log(`\n== G1 on PostgreSQL, ${compactCount(size)} x ${dims} ==`);
  const database = await openDatabase();
  let server: ServerHandle | null = null;
  let exactClient: pg.Client | null = null;
  try {
    const env = serverEnv(database);
    const seedStart = performance.now();
    const { key, dataDir } = await seedPostgresWorkspace(env, database, { size, dims, keepDataDir: true });
    const seedS = (performance.now() - seedStart) / 1000;

    // Cold start: the first search sent the moment the server says `listening on`.
    const queries = searchQueries(7, 200);
    server = await startServer('hashing', { env, dataDir: dataDir! });
    const c = timedClient(server.url, key, clients + 1);
    const cold = await firstSearch(c, queries[0]!);

    const { vectors, ids } = await readVectors(database, size);
    exactClient = new pg.Client({ connectionString: database.url });
    await exactClient.connect();
    // pgvector's exact KNN: a sequential scan, whatever index a model has.
    await exactClient.query('SET enable_indexscan = off');
    await exactClient.query('SET enable_bitmapscan = off');
    const g1Ms: number[] = [];
    const exactMs: number[] = [];
    const recalls: number[] = [];
    const total = 5 + Number(opts.queries);
    const bar = phase('G1 / pgvector exact / plain, one client', total, 'queries');
    for (let i = 0; i < total; i++) {
      const q = queries[i % queries.length]!;
      const qv = hashEmbed(q, dims);
      let g = 0;
      let e = 0;
      let g1Ids: string[] = [];
      const runG1 = async () => { ({ ms: g, ids: g1Ids } = await timedG1(c, q)); };
      const runExact = async () => {
        const s = performance.now();
        await exactClient!.query(`SELECT m.id FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
          ORDER BY v.embedding::vector(${dims}) <=> $1::vector(${dims}) LIMIT 10`, [`[${Array.from(qv).join(',')}]`]);
        e = performance.now() - s;
      };
      if (i % 2 === 0) { await runG1(); await runExact(); } else { await runExact(); await runG1(); }
      const exact = plainTopK(vectors, size, dims, qv, 10);
      const exactIds = new Set(Array.from(exact.rows.subarray(0, exact.count), (row) => ids[row]!));
      if (i >= 5) {
        g1Ms.push(g); exactMs.push(e);
        recalls.push(recallAt10(g1Ids, exactIds));
      }
      bar.increment();
    }
    bar.stop();

    log(`${clients} clients for ${durationS} s, /health polled`);
    const concurrent = await searchesWithHealth(server, key, c, { clients, durationS, queries });
    const rssMiB = (await server.rssMiB()) ?? Number.NaN;
    c.close();
    await server.stop();
    return {
      size, g1Ms, exactMs, recalls, seedS, concurrent, firstSearchMs: cold.ms, firstRefusals: cold.refusals, restartMs: server.startupMs,
      rssMiB, baseRssMiB, floatsMiB: floatsMiB(size, dims), load: loadAverage(),
    };
  } finally {
    await exactClient?.end().catch(() => undefined);
    await server?.dispose();
    await database.stop();
  }
}

/** RSS of a server on an empty database after one search: the fixed base the vectors add to. */
async function baseRss(): Promise<number> {
  const database = await openDatabase();
  const env = serverEnv(database);
  const s = await startServer('hashing', { env });
  try {
    const key = await createEnterpriseKey(s, 'hashing', env);
    await postJson(s.url, SEARCH_PATH, key, { query: 'warm up', limit: 10, threshold: 0 }, 200);
    const rss = (await s.rssMiB()) ?? Number.NaN;
    await s.stop();
    return rss;
  } finally {
    await s.dispose();
    await database.stop();
  }
}

const started = Date.now();
const loadAtStart = loadAverage();
const describe = await (async () => { const d = await openDatabase(); try { return await d.describe(); } finally { await d.stop(); } })();
const base = await baseRss();
const rows: Row[] = [];
for (const size of sizes) rows.push(await runSize(size, base));

const argv = process.argv.slice(2).map((arg) => (opts.databaseUrl ? arg.replace(opts.databaseUrl, 'URL') : arg));
const command = `npm run bench:engine -- ${argv.join(' ')}`.trim();
const table = [
  '| memories | dims | G1 p50 ms | G1 p99 ms | G1 recall@10 (mean, min) | pgvector exact p50 ms | G1 / exact (median) | ' +
    `${clients} clients: req/s | ${clients} clients: p50 ms | /health p99 ms (max, polls) | restart: spawn → listening ms | first search after listening ms | RSS MiB (base) | (RSS − base) / raw floats | seeding s (with the first server) | load avg |`,
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => {
    const ratio = median(r.g1Ms.map((g, i) => g / r.exactMs[i]!));
    const k = r.concurrent;
    return `| ${r.size.toLocaleString('en')} | ${dims} | ${fmt(median(r.g1Ms))} | ${fmt(percentile(r.g1Ms, 99))} | ${recallCell(r.recalls)} | ${fmt(median(r.exactMs))} | ` +
      `${ratio.toFixed(2)}× | ${fmt(k.perSecond, 0)} | ${fmt(k.p50)} | ${fmt(k.healthP99)} (${fmt(k.healthMax)}, ${k.healthCount}) | ${restartCells(r)} | ` +
      `${fmt(r.seedS, 0)} | ${r.load.toFixed(1)} |`;
  }),
].join('\n');
const body = [
  `- Command: \`${command}\``,
  `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}; database: ${describe}${opts.databaseUrl ? ` on ${new URL(opts.databaseUrl).hostname}` : ''}`,
  `- 1-minute load average: ${loadAtStart.toFixed(1)} when the suite started, ${loadAverage().toFixed(1)} when it ended`,
  '',
  'One workspace seeded straight into a new database through the store\'s atomic batches of 1,000 (hashing embedder, ' +
  `${dims} dims), then the server restarted on it (the node's in-memory index loads before it listens). "pgvector exact": ` +
  '`ORDER BY embedding <=> q LIMIT 10` with index scans off, from this process; recall against an exact scan in this ' +
  `process. Then ${clients} keep-alive clients search for ${durationS} s while \`GET /health\` is polled every 20 ms. ` +
  'RSS: the node after that run (the database\'s processes are not in it); the base is a node on an empty database.',
  '',
  table,
].join('\n');
process.stdout.write(`${body}\n`);
if (opts.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'engine-postgres', title: 'Semantic search engine on PostgreSQL: G1 against pgvector exact, concurrency, cold start, memory', body }]);
