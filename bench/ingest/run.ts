import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { assertClean, measure, type LoadResult } from '../http/load.ts';
import { MEMORIES_PATH, postJson } from '../http/client.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { memoryGenerator } from '../lib/corpus.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { table } from '../lib/markdown.ts';
import { log } from '../lib/progress.ts';
import { createEnterpriseKey, REPO_ROOT, startServer, type ServerHandle } from '../lib/server.ts';
import { fmt, median } from '../lib/stats.ts';
import { cpuSplit, threadTimes, type CpuSplit } from '../lib/thread-cpu.ts';
import { profileShares } from './profile.ts';
import pg from 'pg';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import { createServerDatabase, startPglite } from '../lib/postgres.ts';
import { seedStoreDirectly } from '../lib/seed-store.ts';
import { startRawModel } from './raw-model.ts';

/**
 * `npm run bench:ingest`: memory creates per second.
 * - local model: G1 creates against the model alone in worker threads (one thread, two threads, best batch size of
 *   each), and against the server limited to one model worker; all measured in turn within each round.
 * - hashing embedder: G1 single creates against G6 batches of 100 creates (per memory), plus G1 with
 *   MNEMO_SQLITE_SYNCHRONOUS=normal (what the fsync costs), and a CPU profile of the server under G1 creates.
 */
const program = new Command('bench:ingest')
  .description('ingest throughput: local model on both cores vs the raw model; hashing G1 single creates vs G6 batches')
  .option('--part <which>', 'local, hashing, all, or stores (SQLite beside PostgreSQL: G6 atomic batches and G1 creates)', 'all')
  .option('--rounds <n>', 'rounds (every variant measured once per round)', '3')
  .option('--duration <s>', 'measured seconds per variant', '8')
  .option('--connections <n>', 'concurrent G1 clients (hashing)', '16')
  .option('--local-connections <n>', 'concurrent G1 clients (local model: a few per worker keep every worker busy)', '6')
  .option('--batches <list>', 'raw-model batch sizes tried (the best counts)', '1,4,16')
  .option('--store <store>', 'stores part: sqlite, postgres (PGlite in a child process unless --database-url) or both', 'both')
  .option('--database-url <url>', 'stores part: this PostgreSQL server (pgvector installed) instead of PGlite; a new database per measurement, dropped after')
  .option('--memories <n>', 'stores part: memories written per G6 measurement', '10000')
  .option('--batch <n>', 'stores part: creates per atomic batch', '1000')
  .option('--clients <list>', 'stores part: concurrent clients', '1,8')
  .option('--write', 'update the ingest sections of BENCHMARKS.md')
  .parse();
const o = program.opts<{ store: string; databaseUrl?: string; memories: string; batch: string; clients: string; part: string; rounds: string; duration: string; connections: string; localConnections: string; batches: string; write?: boolean }>();
const rounds = Number(o.rounds);
const durationS = Number(o.duration);
const connections = Number(o.connections);
const localConnections = Number(o.localConnections);
const batchSizes = o.batches.split(',').map(Number);

/**
 * Load shedding off: this measures throughput, and on a 2-core machine shared with other work the event loop can lag
 * past the 1 s default, which would answer 503 instead of measuring.
 */
const SERVER_ENV = { MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0' };

const next = memoryGenerator(11);
const bodies = Array.from({ length: 5000 }, () => next());
/** What the memory service embeds for a memory: title, blank line, content. */
const texts = bodies.map((b) => `${b.title}\n\n${b.content}`);
const meanChars = texts.reduce((sum, t) => sum + t.length, 0) / texts.length;
let bodyCursor = 0;
const nextBody = () => JSON.stringify(bodies[bodyCursor++ % bodies.length]);

const header = (command: string, started: number, loadAtStart: number) => [
  `- Command: \`${command}\``,
  `- Date: ${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  `- 1-minute load average: ${fmt(loadAtStart, 1)} when the run started, ${fmt(loadAverage(), 1)} when it ended`,
].join('\n');
const command = `npm run bench:ingest -- --part ${o.part} --rounds ${rounds} --duration ${durationS}` +
  (o.part === 'stores' ? ` --store ${o.store}${o.databaseUrl ? ' --database-url URL' : ''} --memories ${o.memories} --batch ${o.batch} --clients ${o.clients}` : '') +
  (o.write ? ' --write' : '');

async function g1Creates(server: ServerHandle, key: string, label: string, clients = connections): Promise<LoadResult> {
  // No warm-up run for the local model: a second may not complete a single create; warmLocal() warmed it instead.
  const warmupSeconds = clients === connections ? 1 : 0;
  const result = await measure({
    label, baseUrl: server.url, apiKey: key, path: MEMORIES_PATH, nextBody, connections: clients, durationSeconds: durationS, warmupSeconds,
  });
  assertClean(label, result);
  return result;
}

/** CPU milliseconds per item (text or create) of one measurement, by thread group; undefined without /proc. */
interface CpuPerItem extends CpuSplit {
  /** The bench process while it drives a server (autocannon), per create; 0 for the raw model (it is that process). */
  client: number;
}

/**
 * Runs `work` (which returns how many items it completed) and splits the CPU it cost over `pid`'s threads: its main
 * thread, its `modelThreads` busiest threads (the model workers), the others (V8's GC and compiler threads, libuv's
 * pool); plus, when `pid` is a server, what this process (the HTTP client) used meanwhile.
 */
async function withCpu<T>(pid: number, modelThreads: number, work: () => Promise<T>, items: (result: T, seconds: number) => number):
  Promise<{ result: T; cpu: CpuPerItem | undefined }> {
  const isSelf = pid === process.pid;
  const before = await threadTimes(pid);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const split = cpuSplit(pid, before, await threadTimes(pid), modelThreads);
  const n = items(result, seconds);
  if (!split || n <= 0) return { result, cpu: undefined };
  return {
    result,
    cpu: {
      main: split.main / n, busiest: split.busiest / n, other: split.other / n,
      client: isSelf ? 0 : (self.user + self.system) / 1000 / n,
    },
  };
}

async function localPart(): Promise<string> {
  const started = Date.now();
  const loadAtStart = loadAverage();
  const raw = await startRawModel(2, texts);
  const servers = {
    both: await startServer('local', { env: SERVER_ENV }), // the default: one model worker per CPU
    one: await startServer('local', { env: { ...SERVER_ENV, MNEMO_EMBEDDING_WORKERS: '1' } }),
  };
  const rows: {
    raw1: number; raw2: number; raw1Batch: number; raw2Batch: number; both: number; one: number; load: number;
    cpu: { raw1?: CpuPerItem; raw2?: CpuPerItem; both?: CpuPerItem; one?: CpuPerItem };
  }[] = [];
  // The server's default pool: one model worker per CPU, at most 4 (local.embedder.ts).
  const workers = { both: Math.min(describeMachine().nproc, 4), one: 1 };
  try {
    const keys = { both: await createEnterpriseKey(servers.both, 'local'), one: await createEnterpriseKey(servers.one, 'local') };
    // Warm-up: a few creates on each server, as many at once as it has workers or more.
    for (const [server, key] of [[servers.both, keys.both], [servers.one, keys.one]] as const) {
      await Promise.all(Array.from({ length: localConnections }, () => postJson(server.url, MEMORIES_PATH, key, JSON.parse(nextBody()), 201)));
    }
    for (const batch of batchSizes) await raw.throughput(2, batch, 1000); // warm-up: kernels for each shape
    for (let round = 0; round < rounds; round++) {
      const best = async (threads: number) => {
        let top: { perSecond: number; batch: number; cpu?: CpuPerItem } = { perSecond: 0, batch: 0 };
        for (const batch of batchSizes) {
          const { result: perSecond, cpu } = await withCpu(process.pid, threads, () => raw.throughput(threads, batch, durationS * 1000),
            (perSecond, seconds) => perSecond * seconds); // texts done: the rate is over the call's own elapsed time
          log(`round ${round + 1}: raw model, ${threads} thread(s), batch ${batch}: ${fmt(perSecond, 1)} texts/s`);
          if (perSecond > top.perSecond) top = { perSecond, batch, ...(cpu ? { cpu } : {}) };
        }
        return top;
      };
      const creates = (which: 'both' | 'one', label: string) => withCpu(servers[which].pid, workers[which],
        () => g1Creates(servers[which], keys[which], `round ${round + 1}: G1 creates, ${label}`, localConnections), (r) => r.requests);
      const raw1 = await best(1);
      const both = await creates('both', 'default workers');
      const raw2 = await best(2);
      const one = await creates('one', '1 worker');
      rows.push({
        raw1: raw1.perSecond, raw2: raw2.perSecond, raw1Batch: raw1.batch, raw2Batch: raw2.batch, both: both.result.perSecond,
        one: one.result.perSecond, load: loadAverage(),
        cpu: { raw1: raw1.cpu, raw2: raw2.cpu, both: both.cpu, one: one.cpu },
      });
      log(`round ${round + 1}: raw 1 thread ${fmt(raw1.perSecond, 1)}/s, raw 2 threads ${fmt(raw2.perSecond, 1)}/s, Mnemo ${fmt(both.result.perSecond, 1)}/s, Mnemo 1 worker ${fmt(one.result.perSecond, 1)}/s`);
    }
    await servers.both.stop();
    await servers.one.stop();
  } finally {
    await raw.close();
    await servers.both.dispose();
    await servers.one.dispose();
  }
  const med = (f: (r: typeof rows[number]) => number) => median(rows.map(f));
  const perRound = rows.map((r, i) => [
    String(i + 1), fmt(r.raw1, 1), String(r.raw1Batch), fmt(r.raw2, 1), String(r.raw2Batch), fmt(r.both, 1), fmt(r.one, 1),
    `${fmt(r.both / r.raw1)}×`, `${fmt(r.both / r.raw2)}×`, fmt(r.load, 1),
  ]);
  perRound.push([
    '**median**', fmt(med((r) => r.raw1), 1), '', fmt(med((r) => r.raw2), 1), '', fmt(med((r) => r.both), 1), fmt(med((r) => r.one), 1),
    `**${fmt(med((r) => r.both / r.raw1))}×**`, `**${fmt(med((r) => r.both / r.raw2))}×**`, '',
  ]);
  const cpuRows = ([
    ['raw model, 1 thread (per text)', 'raw1'], ['raw model, 2 threads (per text)', 'raw2'],
    ['Mnemo, default workers (per create)', 'both'], ['Mnemo, 1 worker (per create)', 'one'],
  ] as const).flatMap(([label, key]) => {
    const got = rows.map((r) => r.cpu[key]).filter((c): c is CpuPerItem => c !== undefined);
    if (got.length === 0) return [];
    const m = (f: (c: CpuPerItem) => number) => median(got.map(f));
    const isRaw = key.startsWith('raw');
    return [[label, fmt(m((c) => c.busiest), 1), fmt(m((c) => c.main), 1), fmt(m((c) => c.other), 1), isRaw ? '' : fmt(m((c) => c.client), 1),
      fmt(m((c) => c.busiest + c.main + c.other + c.client), 1)]];
  });
  const cpuTable = cpuRows.length === 0 ? [] : [
    '',
    'CPU per text (raw model) or per create (Mnemo), milliseconds, medians over the rounds, from the threads\' user + system ' +
      'times in /proc (read before and after each measurement; the raw model\'s row is its best batch size). Model threads: ' +
      'the busiest threads, as many as there are model workers; main thread: the server\'s event loop (for the raw model, the ' +
      'bench thread that hands out texts); other threads: all the rest (V8\'s garbage-collector and compiler threads, libuv\'s pool, ' +
      'the server\'s search and loader threads); HTTP client: the bench process driving the server (autocannon). A create\'s ' +
      'figure is an upper bound: the server\'s CPU includes the creates still in flight when the run stops, counted are the ' +
      'completed ones. On two cores the model threads get what the others leave.',
    '',
    table(['run', 'model threads', 'main thread', 'other threads', 'HTTP client', 'total'], cpuRows, 'lrrrrr'),
  ];
  return [
    header(command, started, loadAtStart),
    '',
    `Texts: generated memories (title + content, ${fmt(meanChars, 0)} characters on average, the text the service embeds). ` +
      `Raw model: \`initModel(modelSource).embed(batch)\` back to back in 1 or 2 worker threads, best of batch sizes ${batchSizes.join(', ')}; ` +
      `Mnemo: G1 \`POST /api/v1/memories\` over loopback, ${localConnections} autocannon connections, ${durationS} s (after a few warm-up creates), ` +
      'with the default model workers (one per CPU) and with `MNEMO_EMBEDDING_WORKERS=1`. Each round measures all four in turn.',
    '',
    table(['round', 'raw 1 thread texts/s', 'batch', 'raw 2 threads texts/s', 'batch', 'Mnemo creates/s', 'Mnemo, 1 worker', 'Mnemo / raw 1 thread', 'Mnemo / raw 2 threads', 'load avg'],
      perRound, 'rrrrrrrrrr'),
    ...cpuTable,
  ].join('\n');
}

async function hashingPart(): Promise<string> {
  const started = Date.now();
  const loadAtStart = loadAverage();
  const full = await startServer('hashing', { env: SERVER_ENV });
  const normal = await startServer('hashing', { env: { ...SERVER_ENV, MNEMO_SQLITE_SYNCHRONOUS: 'normal' } });
  const rows: { g1: number; g1Normal: number; g6: number; g6Atomic: number; load: number }[] = [];
  try {
    const g1Key = await createEnterpriseKey(full, 'hashing');
    const normalKey = await createEnterpriseKey(normal, 'hashing');
    // G6 allows 10 batch requests a minute per key: enough keys that the limit never answers.
    const batchKeys = await Promise.all(Array.from({ length: 4 }, () => createEnterpriseKey(full, 'hashing')));
    const used: number[][] = batchKeys.map(() => []);
    const takeKey = async (): Promise<string> => {
      for (;;) {
        const now = Date.now();
        for (let k = 0; k < batchKeys.length; k++) {
          used[k] = used[k]!.filter((t) => now - t < 61_000);
          if (used[k]!.length < 10) {
            used[k]!.push(now);
            return batchKeys[k]!;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    /** Memories per second through G6 batches of 100 creates, two batches in flight, for about `durationS`. */
    const g6 = async (atomic: boolean): Promise<number> => {
      let memories = 0;
      const run = async () => {
        for (let sent = 0; sent < 2; sent++) {
          const key = await takeKey();
          const body = { operations: Array.from({ length: 100 }, () => ({ type: 'create', data: bodies[bodyCursor++ % bodies.length] })), options: { atomic } };
          const res = await fetch(`${full.url}/api/v1/batch`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`G6 batch answered ${res.status}: ${text.slice(0, 300)}`);
          memories += 100;
        }
      };
      const t0 = performance.now();
      await Promise.all([run(), run()]);
      return memories / ((performance.now() - t0) / 1000);
    };
    await g6(false); // warm-up
    for (let round = 0; round < rounds; round++) {
      const g1 = await g1Creates(full, g1Key, `round ${round + 1}: G1 single creates`);
      const batch = await g6(false);
      const g1Normal = await g1Creates(normal, normalKey, `round ${round + 1}: G1 single creates, synchronous=normal`);
      const batchAtomic = await g6(true);
      rows.push({ g1: g1.perSecond, g1Normal: g1Normal.perSecond, g6: batch, g6Atomic: batchAtomic, load: loadAverage() });
      log(`round ${round + 1}: G1 ${fmt(g1.perSecond, 0)}/s, G6 ${fmt(batch, 0)}/s, G6 atomic ${fmt(batchAtomic, 0)}/s, G1 normal ${fmt(g1Normal.perSecond, 0)}/s`);
    }
    await full.stop();
    await normal.stop();
  } finally {
    await full.dispose();
    await normal.dispose();
  }

  const profileTable = await profilePart();

  const med = (f: (r: typeof rows[number]) => number) => median(rows.map(f));
  const perRound = rows.map((r, i) => [
    String(i + 1), fmt(r.g1, 0), fmt(r.g6, 0), fmt(r.g6Atomic, 0), `${fmt(r.g1 / r.g6)}×`, `${fmt(r.g1 / r.g6Atomic)}×`, fmt(r.g1Normal, 0), fmt(r.load, 1),
  ]);
  perRound.push(['**median**', fmt(med((r) => r.g1), 0), fmt(med((r) => r.g6), 0), fmt(med((r) => r.g6Atomic), 0),
    `**${fmt(med((r) => r.g1 / r.g6))}×**`, `**${fmt(med((r) => r.g1 / r.g6Atomic))}×**`, fmt(med((r) => r.g1Normal), 0), '']);
  return [
    header(command, started, loadAtStart),
    '',
    `Hashing embedder, \`MNEMO_SQLITE_SYNCHRONOUS=full\` (the default) unless said. G1: \`POST /api/v1/memories\`, ${connections} autocannon connections, ` +
      `${durationS} s after 1 s of warm-up. G6: \`POST /api/v1/batch\` with 100 creates each, two batches in flight, four in all per measurement ` +
      '(default options: every create its own savepoint, creates arriving together sharing a COMMIT (SQLite group commit); and `atomic: true`: one transaction per batch). Memories per second.',
    '',
    table(['round', 'G1 creates/s', 'G6 memories/s', 'G6 atomic memories/s', 'G1 / G6', 'G1 / G6 atomic', 'G1 creates/s, sync normal', 'load avg'], perRound, 'rrrrrrrr'),
    '',
    profileTable,
  ].join('\n');
}

/** Where a G1 create's time goes: a CPU profile of a fresh server (hashing) under the same G1 load. */
async function profilePart(): Promise<string> {
  const profileDir = await mkdtemp(join(tmpdir(), 'mnemo-ingest-profile-'));
  const spawned = performance.now();
  const profiled = await startServer('hashing', { env: SERVER_ENV, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
  try {
    const key = await createEnterpriseKey(profiled, 'hashing');
    // Start-up, the key and the load's warm-up second are left out of the shares.
    const skipMs = performance.now() - spawned + 1000;
    const load = await g1Creates(profiled, key, 'G1 single creates, profiled');
    await profiled.stop();
    const file = (await readdir(profileDir)).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile written in ${profileDir}`);
    const { busyMs, idleMs, shares } = await profileShares(join(profileDir, file), skipMs);
    const top = shares.slice(0, 20).map((s) => [s.label, fmt(s.ms, 0), `${fmt(s.share * 100, 1)} %`]);
    return [
      `CPU profile of the server (\`node --cpu-prof\`, the measured seconds only) while serving ${fmt(load.perSecond, 0)} G1 creates/s for ${durationS} s: ` +
        `${fmt(busyMs / 1000, 1)} s busy, ${fmt(idleMs / 1000, 1)} s idle on its main thread. Time is charged to the innermost Mnemo function on the stack, ` +
        'so a SQLite statement (with its FTS trigger) or a COMMIT (with its fsync) counts for the function that ran it:',
      '',
      table(['where (innermost Mnemo frame, else package)', 'ms', 'share of busy'], top, 'lrr'),
    ].join('\n');
  } finally {
    await profiled.dispose();
    await rm(profileDir, { recursive: true, force: true });
  }

}

/** A fresh store of kind `store` for one measurement: its server env, a direct handle for G6 seeding, and cleanup. */
async function freshStore(store: 'sqlite' | 'postgres'): Promise<{ env: Record<string, string>; open: () => Promise<Storage>; describe: () => Promise<string>; drop: () => Promise<void> }> {
  if (store === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'mnemo-ingest-sqlite-'));
    const file = join(dir, 'mnemo.db');
    return {
      env: { MNEMO_DATABASE_FILE: file }, open: async () => createSqliteStorage({ file }), describe: async () => 'SQLite (better-sqlite3), synchronous=full',
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  const db = o.databaseUrl ? await createServerDatabase(o.databaseUrl, { log }) : await startPglite();
  const poolSize = Number(db.env.MNEMO_DATABASE_POOL_SIZE ?? 10);
  return {
    env: db.env, describe: () => db.describe(), drop: () => db.stop(),
    open: () => createPostgresStorage(pgPoolExecutor(new pg.Pool({ connectionString: db.url, max: poolSize }))),
  };
}

/**
 * SQLite beside PostgreSQL on the write paths: G6 atomic batches straight into the store (`applyAtomically`, as the
 * G6 service calls it and as bench corpora are seeded), `--memories` in batches of `--batch`, each client its own
 * workspace; and G1 single creates over HTTP (hashing embedder), one fresh store per measurement.
 */
async function storesPart(): Promise<string> {
  const started = Date.now();
  const loadAtStart = loadAverage();
  const kinds = o.store === 'both' ? ['sqlite', 'postgres'] as const : [o.store as 'sqlite' | 'postgres'];
  const clientCounts = o.clients.split(',').map(Number);
  const total = Number(o.memories);
  const batch = Number(o.batch);
  /** Rates by `store:g6|g1:client index`, one per round. */
  const samples = new Map<string, number[]>();
  const record = (key: string, rate: number) => samples.set(key, [...samples.get(key) ?? [], rate]);
  let postgres = '';
  for (let round = 0; round < rounds; round++) {
    for (const kind of kinds) {
      for (const [c, clients] of clientCounts.entries()) {
        const fresh = await freshStore(kind);
        try {
          if (kind === 'postgres') postgres = await fresh.describe();
          const storage = await fresh.open();
          const t0 = performance.now();
          await Promise.all(Array.from({ length: clients }, (_, k) => seedStoreDirectly({
            applyAtomically: (scope, steps) => {
              const chunks = [];
              for (let i = 0; i < steps.length; i += batch) chunks.push(steps.slice(i, i + batch));
              return chunks.reduce<Promise<Memory[]>>(async (prev, chunk) => [...await prev, ...await storage.memories.applyAtomically(scope, chunk)], Promise.resolve([]));
            },
          }, { tenantId: 'bench', mode: 'live', workspace: `w${k}` }, { size: Math.ceil(total / clients), dims: 512 })));
          const perSecond = clients * Math.ceil(total / clients) / ((performance.now() - t0) / 1000);
          record(`${kind}:g6:${c}`, perSecond);
          log(`round ${round + 1}: ${kind}, G6 atomic batches of ${batch}, ${clients} client(s): ${fmt(perSecond, 0)} memories/s`);
          await storage.close();
          const server = await startServer('hashing', { env: { ...SERVER_ENV, ...fresh.env } });
          try {
            const key = await createEnterpriseKey(server, 'hashing', fresh.env);
            const g1 = await measure({
              label: `${kind} G1`, baseUrl: server.url, apiKey: key, path: MEMORIES_PATH, nextBody, connections: clients, durationSeconds: durationS, warmupSeconds: 1,
            });
            assertClean(`${kind} G1`, g1);
            record(`${kind}:g1:${c}`, g1.perSecond);
            log(`round ${round + 1}: ${kind}, G1 single creates, ${clients} client(s): ${fmt(g1.perSecond, 0)} creates/s`);
            await server.stop();
          } finally {
            await server.dispose();
          }
        } finally {
          await fresh.drop();
        }
      }
    }
  }
  const med = (kind: string, what: 'g6' | 'g1', c: number) => median(samples.get(`${kind}:${what}:${c}`) ?? [NaN]);
  const rowsOut = clientCounts.flatMap((clients, c) => (['g6', 'g1'] as const).map((what) => {
    const label = what === 'g6' ? `G6 atomic batches of ${batch}, memories/s` : 'G1 single creates/s';
    const sqlite = med('sqlite', what, c);
    const pgRate = med('postgres', what, c);
    return [label, String(clients), ...kinds.map((k) => fmt(med(k, what, c), 0)),
      ...(kinds.length === 2 ? [`**${fmt(pgRate / sqlite)}×**`] : [])];
  }));
  return [
    header(command, started, loadAtStart),
    ...(postgres ? [`- PostgreSQL: ${postgres}${o.databaseUrl ? ` (${new URL(o.databaseUrl).hostname})` : ''}`] : []),
    '',
    `Hashing embedder (512 dimensions), a fresh store per measurement, medians of ${rounds} round(s). G6: ${total.toLocaleString('en')} memories ` +
      `straight into the store through \`applyAtomically\` (as the G6 service calls it), in atomic batches of ${batch}, each client its own ` +
      `workspace; G1: \`POST /api/v1/memories\` over loopback for ${durationS} s after 1 s of warm-up, as many autocannon connections as clients. ` +
      'The last column is PostgreSQL\'s rate over SQLite\'s (target ≥ 0.5×).',
    '',
    table(['write', 'clients', ...kinds.map((k) => (k === 'sqlite' ? 'SQLite' : 'PostgreSQL')), ...(kinds.length === 2 ? ['PostgreSQL / SQLite'] : [])],
      rowsOut, `lr${kinds.map(() => 'r').join('')}${kinds.length === 2 ? 'r' : ''}`),
  ].join('\n');
}

const write = async (id: string, title: string, body: string) => {
  console.log(`\n${body}\n`);
  if (o.write) await updateSections(join(REPO_ROOT, 'BENCHMARKS.md'), [{ id, title, body }]);
};
if (o.part === 'profile') console.log(await profilePart());
if (o.part === 'local' || o.part === 'all') await write('ingest-local', 'Ingest: the local model on both cores', await localPart());
if (o.part === 'stores') {
  const title = o.databaseUrl ? 'Ingest: SQLite beside a PostgreSQL server' : 'Ingest: SQLite beside PostgreSQL (PGlite)';
  await write(o.databaseUrl ? 'ingest-stores-server' : 'ingest-stores', title, await storesPart());
}
if (o.part === 'hashing' || o.part === 'all') {
  await write('ingest-hashing', 'Ingest: G1 single creates vs G6 batches (hashing)', await hashingPart());
}
