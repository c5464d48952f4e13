import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { searchQueries } from '../lib/corpus.ts';
import { log } from '../lib/progress.ts';
import { createEnterpriseKey, REPO_ROOT, startServer, type EmbedderKind } from '../lib/server.ts';
import { createServerDatabase, startPglite, type PostgresHandle } from '../lib/postgres.ts';
import { postgresCpu } from '../lib/postgres-cpu.ts';
import { processCpuSeconds } from '../lib/process-cpu.ts';
import { fmt, median } from '../lib/stats.ts';
import { hnswRecall, type RecallResult } from './recall.ts';
import { assertClean, measure, type CpuSample, type LoadResult } from '../http/load.ts';
import { seedCorpus } from '../http/seed.ts';

/**
 * Search latency of every search surface over HTTP, side by side on one corpus in one workspace: G1 semantic, G3
 * hybrid, G4 semantic (GET) and G4 vector search, each under the same autocannon load.
 */
export interface SearchSuiteOptions {
  /** Settings for every server the suite starts (an A/B switch). */
  serverEnv?: Record<string, string>;
  /** Each embedder with its corpus size (the local model embeds ~14 memories/s here, so it gets a smaller one). */
  runs: { embedder: EmbedderKind; size: number }[];
  /** Client counts, each measured on the same seeded stores in turn. */
  connections: number[];
  durationSeconds: number;
  warmupSeconds: number;
  seedConcurrency: number;
  /** The stores to run each corpus on, one after the other (postgres: PGlite with pgvector in a child process). */
  stores: StoreKind[];
  /** postgres on this server instead of PGlite: a new database per corpus on it (bench/lib/postgres.ts). */
  databaseUrl?: string | undefined;
  /** Leave each server database in place after the run (for EXPLAIN), its URL logged. */
  keepDatabase?: boolean | undefined;
  /** `hnsw.ef_search` values whose recall is measured. */
  efSearch: number[];
  /**
   * G1 and G3 measured again, in turn (in alternating order), this many times after the surfaces, counting the
   * surfaces' pass (later rounds with a warm-up of 2 s each): the hybrid ratio
   * is the median of the rounds', the surfaces' own pass counting as the first (one G1 p50 at 10k moved by 40 %
   * between two runs of the same build, so a single pair decides little).
   */
  ratioRounds: number;
}

export type StoreKind = 'sqlite' | 'postgres';

export interface SearchRow {
  embedder: EmbedderKind; store: StoreKind; size: number; connections: number; surface: string; result: LoadResult;
  /** G1 and G3: the p50 of each later round (SearchSuiteOptions.ratioRounds). */
  roundP50s?: number[];
}
export interface RecallRow { embedder: EmbedderKind; size: number; efSearch: number; recall: RecallResult }

export async function runSearchSuite(o: SearchSuiteOptions):
  Promise<{ rows: SearchRow[]; recalls: RecallRow[]; seedPerSecond: Record<string, number>; copySeconds: Record<string, number>; postgres: string | null }> {
  let postgres: string | null = null;
  const rows: SearchRow[] = [];
  const recalls: RecallRow[] = [];
  const seedPerSecond: Record<string, number> = {};
  const copySeconds: Record<string, number> = {};
  for (const { embedder, size } of o.runs) {
    // The corpus is seeded once, through G1 into SQLite; PostgreSQL gets a copy of that store (`mnemo migrate`), so
    // both stores answer over the very same rows and vectors, with the same key.
    const seeded = await startServer(embedder, { env: o.serverEnv ?? {} });
    let database: PostgresHandle | undefined;
    try {
      const key = await createEnterpriseKey(seeded, embedder);
      const seed = await seedCorpus(seeded.url, key, size, { concurrency: o.seedConcurrency, seed: 42, label: `seed ${embedder} ${size}` });
      seedPerSecond[`${embedder} ${size.toLocaleString('en')}`] = seed.perSecond;
      const { queries, vectors } = await queryVectors(seeded.url, key);
      if (o.stores.includes('sqlite')) rows.push(...await measureSurfaces(seeded.url, key, embedder, 'sqlite', size, queries, vectors, o, cpuProbe(seeded.pid)));
      await seeded.stop();
      if (!o.stores.includes('postgres')) continue;

      database = o.databaseUrl ? await createServerDatabase(o.databaseUrl, { keep: o.keepDatabase, log }) : await startPglite();
      postgres ??= await database.describe();
      const t0 = performance.now();
      await copyStore(seeded.dataDir, database.url, `copy ${embedder} ${size} to PostgreSQL`);
      // PGlite runs no autovacuum: without statistics the planner joins blind. A server's autovacuum would have run.
      await database.analyze();
      copySeconds[`${embedder} ${size.toLocaleString('en')}`] = (performance.now() - t0) / 1000;
      // The copy holds secrets sealed under the seeded server's master key: the PostgreSQL server needs that key.
      const masterKey = (await readFile(join(seeded.dataDir, 'master.key'), 'utf8')).trim();
      const server = await startServer(embedder, { env: { ...o.serverEnv, ...database.env, MNEMO_MASTER_KEY: masterKey } });
      try {
        rows.push(...await measureSurfaces(server.url, key, embedder, 'postgres', size, queries, vectors, o, cpuProbe(server.pid, database)));
        await server.stop();
      } finally {
        await server.dispose();
      }
      log(`${embedder} postgres: HNSW recall@10 against the exact scan`);
      for (const efSearch of o.efSearch) {
        recalls.push({ embedder, size, efSearch, recall: await hnswRecall(database.url, vectors.slice(0, 50), { efSearch }) });
      }
    } finally {
      await seeded.dispose();
      await database?.stop();
    }
  }
  return { rows, recalls, seedPerSecond, copySeconds, postgres };
}

/** 200 generated questions, and for the first 50 the query vectors of POST /v1/embeddings (1536 numbers). */
async function queryVectors(url: string, key: string): Promise<{ queries: string[]; vectors: number[][] }> {
  const queries = searchQueries(7, 200);
  const vectors: number[][] = [];
  for (const q of queries.slice(0, 50)) {
    const res = await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: q }) });
    if (res.status !== 200) throw new Error(`POST /v1/embeddings answered ${res.status}`);
    vectors.push(((await res.json()) as { data: { embedding: number[] } }).data.embedding);
  }
  return { queries, vectors };
}

/** `mnemo migrate --from sqlite:DIR --to URL`, as an operator moves a store; its progress and summary go to our stderr. */
async function copyStore(dataDir: string, url: string, label: string): Promise<void> {
  log(label);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/mnemo.js', 'migrate', '--from', `sqlite:${dataDir}`, '--to', url], {
      cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', MNEMO_DATABASE_POOL_SIZE: '1' }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Its summary table too goes to stderr: stdout is the benchmark's markdown.
    child.stdout.pipe(process.stderr);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mnemo migrate exited with ${code}`))));
  });
}

/**
 * The server's CPU so far and, on PostgreSQL, the database's: the backends of the server database `database` (found in
 * /proc), or PGlite's child process.
 */
const cpuProbe = (pid: number, database?: PostgresHandle) => async (): Promise<CpuSample> => {
  const server = await processCpuSeconds(pid);
  if (!database) return { server };
  if (database.pid !== undefined) return { server, database: new Map([[database.pid, await processCpuSeconds(database.pid)]]) };
  return { server, database: (await postgresCpu(new URL(database.url).pathname.slice(1))).database };
};

/** Every surface, then G1 and G3 again in turn (ratioRounds), at each client count of `o.connections` in turn. */
async function measureSurfaces(
  url: string, key: string, embedder: EmbedderKind, store: StoreKind, size: number, queries: string[], queryVectorList: number[][], o: SearchSuiteOptions,
  probe: () => Promise<CpuSample>,
): Promise<SearchRow[]> {
  const bearer = { authorization: `Bearer ${key}` };
  const vectors = queryVectorList.map((v) => JSON.stringify({ vector: v, limit: 10, similarity_threshold: 0 }));
  let i = 0;
  const nextQuery = () => queries[i++ % queries.length]!;
  const common = (connections: number, warmupSeconds = o.warmupSeconds) => ({ label: `${embedder} ${store}`, baseUrl: url, apiKey: key, connections, durationSeconds: o.durationSeconds, warmupSeconds, cpuProbe: probe });
  const cases: { surface: string; run: (connections: number, warmupSeconds?: number) => Promise<LoadResult> }[] = [
    { surface: 'G1 POST /api/v1/memories/search', run: (n, w) => measure({ ...common(n, w), path: '/api/v1/memories/search', nextBody: () => JSON.stringify({ query: nextQuery(), limit: 10, threshold: 0 }) }) },
    { surface: 'G3 POST /api/v1/search/hybrid', run: (n, w) => measure({ ...common(n, w), path: '/api/v1/search/hybrid', headers: bearer, nextBody: () => JSON.stringify({ query: nextQuery(), topK: 10 }) }) },
    { surface: 'G4 GET /v1/search', run: (n) => measure({ ...common(n), method: 'GET', path: '/v1/search', headers: bearer, nextBody: () => '', nextPath: () => `/v1/search?q=${encodeURIComponent(nextQuery())}&limit=10&similarity_threshold=0` }) },
    { surface: 'G4 POST /v1/search/vector', run: (n) => measure({ ...common(n), path: '/v1/search/vector', headers: bearer, nextBody: () => vectors[i++ % vectors.length]! }) },
  ];
  const out: SearchRow[] = [];
  for (const connections of o.connections) {
    const pass: SearchRow[] = [];
    for (const c of cases) {
      log(`${embedder} ${store}, ${connections} clients: ${c.surface}`);
      const result = await c.run(connections);
      assertClean(c.surface, result);
      pass.push({ embedder, store, size, connections, surface: c.surface, result });
    }
    const paired = pass.filter((r) => r.surface.startsWith('G1 ') || r.surface.startsWith('G3 '));
    for (let round = 2; round <= o.ratioRounds; round++) {
      // G3 first in even rounds, G1 first in odd ones (the surfaces' pass ran G1 first): an order effect cancels out.
      for (const row of round % 2 === 0 ? [...paired].reverse() : paired) {
        log(`${embedder} ${store}, ${connections} clients: ${row.surface}, ratio round ${round} of ${o.ratioRounds}`);
        const c = cases.find((x) => x.surface === row.surface)!;
        const result = await c.run(connections, 2);
        assertClean(row.surface, result);
        (row.roundP50s ??= []).push(result.p50Ms);
      }
    }
    out.push(...pass);
  }
  return out;
}

export function searchTable(rows: SearchRow[]): string {
  const lines = ['| embedder | store | memories | clients | surface | req/s | p50 ms | p99 ms | server CPU ms / request | database CPU ms / request | non-2xx |',
    '| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
  const cpu = (ms: number | null | undefined) => (ms === null || ms === undefined ? '–' : fmt(ms));
  for (const r of rows) {
    lines.push(`| ${r.embedder} | ${r.store} | ${r.size.toLocaleString('en')} | ${r.connections} | ${r.surface} | ${fmt(r.result.perSecond, 0)} | ${fmt(r.result.p50Ms)} | ${fmt(r.result.p99Ms)} | ${cpu(r.result.cpu?.serverMs)} | ${cpu(r.result.cpu?.databaseMs)} | ${r.result.non2xx} |`);
  }
  return lines.join('\n');
}

/** Issue 13's target: G3 hybrid p50 at most 1.3x G1 semantic p50, per corpus and store (surfaces measured in a row). */
export const HYBRID_RATIO_TARGET = 1.3;

export function hybridRatioTable(rows: SearchRow[]): string {
  const lines = [
    `| embedder | store | memories | clients | G1 semantic p50 ms, by round | G3 hybrid p50 ms, by round | hybrid / semantic, by round | median ratio (target ≤ ${HYBRID_RATIO_TARGET}) |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const key = (r: SearchRow) => `${r.embedder}|${r.store}|${r.size}|${r.connections}`;
  for (const g1 of rows.filter((r) => r.surface.startsWith('G1 '))) {
    const hybrid = rows.find((r) => r.surface.startsWith('G3 ') && r.surface.includes('hybrid') && key(r) === key(g1));
    if (!hybrid) continue;
    const g1s = [g1.result.p50Ms, ...(g1.roundP50s ?? [])];
    const g3s = [hybrid.result.p50Ms, ...(hybrid.roundP50s ?? [])];
    const ratios = g1s.map((ms, i) => g3s[i]! / ms);
    // With an even number of rounds, the mean of the middle two (the lower one would favour the target).
    const sorted = [...ratios].sort((a, b) => a - b);
    const ratio = sorted.length % 2 === 1 ? median(ratios) : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    const list = (values: number[], digits = 2) => values.map((v) => fmt(v, digits)).join(' / ');
    lines.push(`| ${g1.embedder} | ${g1.store} | ${g1.size.toLocaleString('en')} | ${g1.connections} | ${list(g1s)} | ${list(g3s)} | ${list(ratios)} | ${fmt(ratio, 2)}${ratio <= HYBRID_RATIO_TARGET ? '' : ' (missed)'} |`);
  }
  return lines.join('\n');
}

export function recallTable(rows: RecallRow[]): string {
  const lines = ['| embedder | memories | hnsw.ef_search | queries | HNSW recall@10 mean | HNSW recall@10 min | in-memory recall@10 mean | SQL exact scan median ms | HNSW median ms | in-memory median ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const { embedder, size, efSearch, recall: r } of rows) {
    lines.push(`| ${embedder} | ${size.toLocaleString('en')} | ${efSearch} | ${r.queries} | ${fmt(r.meanRecall, 3)} | ${fmt(r.minRecall, 2)} | ${fmt(r.memoryMeanRecall, 3)} | ${fmt(r.exactMedianMs)} | ${fmt(r.hnswMedianMs)} | ${fmt(r.memoryMedianMs)} |`);
  }
  return lines.join('\n');
}
