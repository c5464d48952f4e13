/**
 * `npm run bench:engine`: Mnemo's semantic search over HTTP (G1) against sqlite-vec `vec0` exact KNN on the very same
 * vectors, measured interleaved in one run; then 8 concurrent search clients with GET /health polled beside them;
 * the first search after a restart; and the server's RSS against the raw float bytes of its vectors.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import * as sqliteVec from 'sqlite-vec';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { KeyMode } from '../../src/core/scope.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { searchQueries } from '../lib/corpus.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { log, phase } from '../lib/progress.ts';
import { createEnterpriseKey, REPO_ROOT, startServer, type ServerHandle } from '../lib/server.ts';
import { memoryBreakdown, MEMORY_PROBE } from '../lib/memory-breakdown.ts';
import { threadTimes, threadTimesBetween } from '../lib/process-cpu.ts';
import { compactCount, fmt, median, percentile } from '../lib/stats.ts';
import { MEMORIES_PATH, postJson, SEARCH_PATH, timedClient } from '../http/client.ts';
import {
  firstSearch, floatsMiB, recallAt10, recallCell, restartCells, searchesWithHealth, timedG1, withEngineOptions, type EngineOptions, type RestartFigures,
} from '../lib/engine-runs.ts';
import { normaliseInto, plainTopK } from '../scan/baseline.ts';
import { seedStoreFile } from './seed-file.ts';

// On PostgreSQL (a server's URL, or PGlite with `--store postgres`) the same phases run in engine-postgres.ts.
if (process.argv.slice(2).some((a) => /^--(database-url|store)(=|$)/.test(a))) {
  await import('./engine-postgres.ts');
  process.exit(0);
}

const program = withEngineOptions(new Command('bench:engine'))
  .description('G1 semantic search vs sqlite-vec vec0 on the same vectors; 8 clients with /health beside; cold start; RSS')
  .option('--memory-detail', 'after the concurrent run, log where the server\'s RSS goes (/proc smaps, memoryUsage)')
  .option('--cpu-prof <dir>', 'run the restarted server with node --cpu-prof into <dir> (every thread), and write the phases\' ' +
    'monotonic times to <dir>/phases.json (read both with bench/scan/profile-phases.ts)')
  .option('--keep-store <dir>', 'keep each size\'s seeded store under <dir> and reuse it on later runs (seeding 1M takes minutes)')
  .option('--prime', 'before the measured restart, start the server once on the store, answer one search and stop it (a server ' +
    'that ran before: it leaves its persisted vector codes), and log that first search\'s time')
  .addHelpText('after', '\nOn PostgreSQL: --database-url URL (a server with pgvector) or --store postgres (PGlite); --help then lists its options.')
  .option('--g1-apart', 'the one-client G1 queries in a row before the vec0 and plain scans of the same queries, not alternated ' +
    'with them (each of which reads every vector, GBs at 1M, just before the G1 search that follows it)')
  .option('--write', 'update the "Semantic search engine" section of BENCHMARKS.md')
  .parse();
const opts = program.opts<EngineOptions & { write?: boolean; memoryDetail?: boolean; cpuProf?: string; keepStore?: string; prime?: boolean; g1Apart?: boolean }>();
// Figures taken under the profiler (the server only, not sqlite-vec in this process) are not fit for BENCHMARKS.md.
if (opts.cpuProf !== undefined && opts.write) program.error('--cpu-prof and --write do not go together: profiled figures are slower and skew the ratio to sqlite-vec');
const sizes = opts.sizes.split(',').map((s) => Number(s.trim().replace(/k$/i, '000')));
const dims = Number(opts.dims);
const clients = Number(opts.clients);
const durationS = Number(opts.duration);
const serverEnv = { MNEMO_EMBEDDINGS_DIMENSIONS: String(dims), MNEMO_MAX_CONCURRENT_SEARCHES: '64', ...(opts.threads ? { MNEMO_SEARCH_THREADS: opts.threads } : {}) };

/** A size's figures (the restarted server's vectors start loading before it listens). */
interface Row extends RestartFigures {
  size: number;
  g1Ms: number[];
  vecMs: number[];
  ratios: number[];
  plainMs: number[];
  /** Per query: G1's top 10 ids shared with the exact top 10 of the plain scan, over 10. */
  recalls: number[];
  concurrentPerSecond: number;
  concurrentP50: number;
  healthP99: number;
  healthMax: number;
  healthCount: number;
}

/**
 * With --cpu-prof: when each phase began, as CLOCK_MONOTONIC microseconds (process.hrtime, the clock of a
 * .cpuprofile's timestamps), so that a profile of the server can be cut into the same phases.
 */
const phases = {
  marks: [] as { size: number; phase: string; us: number }[],
  mark(size: number, phase: string) {
    if (opts.cpuProf) this.marks.push({ size, phase, us: Number(process.hrtime.bigint() / 1000n) });
  },
  async save() {
    if (!opts.cpuProf) return;
    await mkdir(opts.cpuProf, { recursive: true });
    await writeFile(join(opts.cpuProf, 'phases.json'), `${JSON.stringify(this.marks, null, 1)}\n`);
  },
};


/** Seeds `size` memories straight into the store file (the server stopped), in large transactions (seed-file.ts). */
function seed(dataDir: string, size: number): { tenantId: string; mode: KeyMode; workspace: string } {
  const file = join(dataDir, 'mnemo.db');
  const db = new Database(file, { readonly: true });
  const scope = db.prepare('SELECT tenant_id AS tenantId, mode, workspace FROM memories LIMIT 1').get() as { tenantId: string; mode: KeyMode; workspace: string };
  db.close();
  const bar = phase(`seed ${compactCount(size)} x ${dims}`, size, 'memories');
  seedStoreFile(file, scope, { size, dims, from: 1, onProgress: (done) => bar.update(done) });
  bar.stop();
  return scope;
}

/** The store's vectors, unit length, row by row (for sqlite-vec and the plain scan), and each row's memory id. */
function readVectors(dataDir: string, size: number): { vectors: Float32Array; ids: string[] } {
  const db = new Database(join(dataDir, 'mnemo.db'), { readonly: true });
  const out = new Float32Array(size * dims);
  const ids: string[] = [];
  let row = 0;
  const rows = db.prepare('SELECT v.vector, m.id FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq ORDER BY v.memory_seq');
  for (const r of rows.iterate() as Iterable<{ vector: Buffer; id: string }>) {
    const v = new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + dims * 4));
    normaliseInto(v, out, row * dims);
    ids.push(r.id);
    row++;
  }
  db.close();
  if (row !== size) throw new Error(`expected ${size} vectors in the store, found ${row}`);
  return { vectors: out, ids };
}

/**
 * A store of `size` memories and an enterprise key for it: seeded into a fresh directory, or with --keep-store the
 * one a previous run kept (seeded there the first time).
 */
async function seededStore(size: number): Promise<{ dataDir: string; key: string; kept: boolean }> {
  const dataDir = opts.keepStore ? join(opts.keepStore, `engine-${size}x${dims}`) : undefined;
  const keyFile = dataDir ? join(dataDir, 'bench-key.json') : '';
  if (dataDir && existsSync(keyFile)) {
    log(`reusing the store kept in ${dataDir}`);
    return { dataDir, key: (JSON.parse(await readFile(keyFile, 'utf8')) as { key: string }).key, kept: true };
  }
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const first = await startServer('hashing', { env: serverEnv, ...(dataDir ? { dataDir } : {}) });
  let key: string;
  try {
    key = await createEnterpriseKey(first, 'hashing');
    await postJson(first.url, MEMORIES_PATH, key, { title: 'first', content: 'the first memory' }, 201);
    await first.stop();
    seed(first.dataDir, size);
  } catch (err) {
    // A fresh directory goes; a kept one stays, to be seeded again (it has no key file yet).
    if (dataDir) await first.stop().catch(() => undefined);
    else await first.dispose();
    throw err;
  }
  // Written last: a store whose seeding was cut short is seeded again.
  if (dataDir) await writeFile(keyFile, JSON.stringify({ key }));
  return { dataDir: first.dataDir, key, kept: dataDir !== undefined };
}

async function runSize(size: number, baseRssMiB: number): Promise<Row> {
  log(`\n== G1 ${compactCount(size)} x ${dims} ==`);
  const store = await seededStore(size);
  const key = store.key;
  let server: ServerHandle | null = null;
  try {

    // Cold start: the first search sent the moment the server says `listening on`.
    const queries = searchQueries(7, 200);
    const probeFile = join(store.dataDir, 'memory-probe.json');
    const nodeArgs = [
      ...(opts.memoryDetail ? ['--require', MEMORY_PROBE] : []),
      ...(opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`] : []),
    ];
    if (opts.prime) {
      const primer = await startServer('hashing', { env: serverEnv, dataDir: store.dataDir });
      const p = timedClient(primer.url, key, 1);
      const first = await firstSearch(p, queries[1]!);
      log(`primed: first search ${fmt(first.ms)} ms after listening (${first.refusals} refusals), spawn → listening ${fmt(primer.startupMs)} ms`);
      p.close();
      // The persisted codes (sqlite-vector-snapshots.ts) are written after a load from the floats: let that end.
      const written = await persistedCodes(store.dataDir);
      log(written ? `persisted codes written ${fmt(written)} ms after the first search` : 'no persisted codes written (code without them?)');
      await primer.stop();
    }
    phases.mark(size, 'spawn');
    server = await startServer('hashing', {
      env: { ...serverEnv, BENCH_MEMORY_PROBE_FILE: probeFile }, dataDir: store.dataDir, nodeArgs,
    });
    phases.mark(size, 'listening');
    let c = timedClient(server.url, key, clients + 1);
    const { ms: firstSearchMs, refusals } = await firstSearch(c, queries[0]!);
    phases.mark(size, 'first answer');

    // sqlite-vec on the same vectors, in this process.
    const { vectors, ids } = readVectors(server.dataDir, size);
    const vec = new Database(':memory:');
    sqliteVec.load(vec);
    vec.exec(`CREATE VIRTUAL TABLE items USING vec0(embedding float[${dims}] distance_metric=cosine)`);
    const insert = vec.prepare('INSERT INTO items (rowid, embedding) VALUES (?, ?)');
    vec.transaction(() => { for (let r = 0; r < size; r++) insert.run(BigInt(r + 1), Buffer.from(vectors.buffer, r * dims * 4, dims * 4)); })();
    const knn = vec.prepare(`SELECT rowid, distance FROM items WHERE embedding MATCH ? AND k = 10 ORDER BY distance`);
    // Fresh connections: building vec0 over 1M rows outlasts the server's keep-alive timeout, and a socket it closed
    // while idle would fail the next request (ECONNRESET / EPIPE).
    c.close();
    c = timedClient(server.url, key, clients + 1);

    // One client: G1 and vec0 on the same query, alternately first.
    const g1Ms: number[] = [];
    const vecMs: number[] = [];
    const plainMs: number[] = [];
    const ratios: number[] = [];
    const recalls: number[] = [];
    const total = 5 + Number(opts.queries);
    // With --g1-apart, G1's searches first, in a row (their times and answers kept for the loop below).
    const apart: { ms: number; ids: string[] }[] = [];
    if (opts.g1Apart) for (let i = 0; i < total; i++) apart.push(await timedG1(c, queries[i % queries.length]!));
    const bar = phase(`G1 / vec0 / plain, one client`, total, 'queries');
    for (let i = 0; i < total; i++) {
      const q = queries[i % queries.length]!;
      const qv = hashEmbed(q, dims);
      let g = 0;
      let v = 0;
      let g1Ids: string[] = [];
      const runG1 = async () => { ({ ms: g, ids: g1Ids } = apart[i] ?? await timedG1(c, q)); };
      const runVec = () => { const s = performance.now(); knn.all(Buffer.from(qv.buffer)); v = performance.now() - s; };
      if (i % 2 === 0) { await runG1(); runVec(); } else { runVec(); await runG1(); }
      const s = performance.now();
      const exact = plainTopK(vectors, size, dims, qv, 10);
      const p = performance.now() - s;
      const exactIds = new Set(Array.from(exact.rows.subarray(0, exact.count), (row) => ids[row]!));
      if (i >= 5) {
        g1Ms.push(g); vecMs.push(v); plainMs.push(p); ratios.push(g / v);
        recalls.push(recallAt10(g1Ids, exactIds));
      }
      bar.increment();
    }
    bar.stop();
    vec.close();

    // `clients` search loops for `duration` seconds, GET /health every 20 ms beside them.
    log(`${clients} clients for ${durationS} s, /health polled`);
    const threadsBefore = await threadTimes(server.pid);
    phases.mark(size, 'clients start');
    const concurrent = await searchesWithHealth(server, key, c, { clients, durationS, queries });
    phases.mark(size, 'clients end');
    const threadsAfter = await threadTimes(server.pid);
    log(`server threads during the ${clients}-client run (${concurrent.searches} searches, ${concurrent.healthCount} /health):\n` +
      threadTimesBetween(server.pid, threadsBefore, threadsAfter));
    const rssMiB = (await server.rssMiB()) ?? Number.NaN;
    if (opts.memoryDetail) log(`memory after the concurrent run:\n${await memoryBreakdown(server.pid, probeFile)}`);
    c.close();
    await server.stop();
    await phases.save();
    return {
      size, g1Ms, vecMs, ratios, plainMs, recalls, concurrentPerSecond: concurrent.perSecond, concurrentP50: concurrent.p50,
      healthP99: concurrent.healthP99, healthMax: concurrent.healthMax, healthCount: concurrent.healthCount,
      firstSearchMs, firstRefusals: refusals, restartMs: server.startupMs, rssMiB, baseRssMiB, floatsMiB: floatsMiB(size, dims), load: loadAverage(),
    };
  } finally {
    // A kept store stays for the next run (dispose would remove its directory).
    if (store.kept) await server?.stop().catch(() => undefined);
    else await server?.dispose();
  }
}

/**
 * Waits (up to two minutes) for a server's persisted vector codes to appear complete in `dataDir`: ms waited, or null
 * when none is being written 5 s on (a server without them).
 */
async function persistedCodes(dataDir: string): Promise<number | null> {
  const dir = join(dataDir, 'mnemo.db-vectors');
  const t0 = performance.now();
  while (performance.now() - t0 < 120_000) {
    const names = existsSync(dir) ? await readdir(dir) : [];
    const writing = names.some((n) => n.endsWith('.tmp'));
    if (names.some((n) => n.endsWith('.matrix')) && !writing) return performance.now() - t0;
    if (!writing && performance.now() - t0 > 5000) return null;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return null;
}

/** RSS of a server with an empty store after one search: the fixed base the vectors add to. */
async function baseRss(): Promise<number> {
  const s = await startServer('hashing', { env: serverEnv });
  try {
    const key = await createEnterpriseKey(s, 'hashing');
    await postJson(s.url, SEARCH_PATH, key, { query: 'warm up', limit: 10, threshold: 0 }, 200);
    const rss = (await s.rssMiB()) ?? Number.NaN;
    await s.stop();
    return rss;
  } finally {
    await s.dispose();
  }
}

const started = Date.now();
const loadAtStart = loadAverage();
const base = await baseRss();
const rows: Row[] = [];
for (const size of sizes) rows.push(await runSize(size, base));

const command = `npm run bench:engine -- ${process.argv.slice(2).join(' ')}`.trim();
const table = [
  '| memories | dims | G1 p50 ms | G1 p99 ms | G1 recall@10 (mean, min) | vec0 p50 ms | G1 / vec0 (median of per-query ratios) | plain JS scan p50 ms | ' +
    `${clients} clients: req/s | ${clients} clients: p50 ms | plain scan /s | throughput ratio | /health p99 ms (max, polls) | restart: spawn → listening ms | first search after listening ms | RSS MiB (empty-store base) | (RSS − base) / raw floats | load avg |`,
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => {
    const plainPerSecond = 1000 / (r.plainMs.reduce((a, b) => a + b, 0) / r.plainMs.length);
    return `| ${r.size.toLocaleString('en')} | ${dims} | ${fmt(median(r.g1Ms))} | ${fmt(percentile(r.g1Ms, 99))} | ${recallCell(r.recalls)} | ${fmt(median(r.vecMs))} | ` +
      `${median(r.ratios).toFixed(2)}× | ${fmt(median(r.plainMs))} | ${fmt(r.concurrentPerSecond, 0)} | ${fmt(r.concurrentP50)} | ${fmt(plainPerSecond, 1)} | ` +
      `${(r.concurrentPerSecond / plainPerSecond).toFixed(2)}× | ${fmt(r.healthP99)} (${fmt(r.healthMax)}, ${r.healthCount}) | ${restartCells(r)} | ${r.load.toFixed(1)} |`;
  }),
].join('\n');
const body = [
  `- Command: \`${command}\``,
  `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  `- 1-minute load average: ${loadAtStart.toFixed(1)} when the suite started, ${loadAverage().toFixed(1)} when it ended`,
  '',
  `One workspace seeded straight into the store file (hashing embedder, ${dims} dims, the title and content embedded as the server ` +
  'does), then the server restarted on it. "restart": spawn to `listening on` (the vectors start loading in the background ' +
  'before the server listens); "first search": a G1 search sent the moment the server printed `listening on`. One client: G1 `POST /api/v1/memories/search` (limit 10, threshold 0: ' +
  'every memory scored and counted) and sqlite-vec 0.1.9 `vec0` exact KNN (cosine, k = 10) on the same vectors read from the ' +
  `store, in the bench process, ${opts.g1Apart ? 'all G1 queries in a row first, then vec0 on each' : 'alternately first'}; "plain JS scan": a single-thread exact scan of those vectors in the bench ` +
  `process (float64 dot products of every row, how Mnemo scanned before). Then ${clients} keep-alive clients search for ` +
  `${durationS} s while \`GET /health\` is polled every 20 ms; "throughput ratio" is their req/s over the plain scan's rate. ` +
  'RSS: the server after that run; the base is a server with an empty store after one search.',
  '',
  table,
].join('\n');
process.stdout.write(`${body}\n`);
if (opts.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'engine', title: 'Semantic search engine: G1 against sqlite-vec, concurrency, cold start, memory', body }]);
