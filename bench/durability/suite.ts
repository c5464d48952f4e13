import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SQLITE_SYNCHRONOUS, type SqliteSynchronous } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import { MEMORIES_PATH } from '../http/client.ts';
import { assertClean, measure, type LoadResult } from '../http/load.ts';
import { memoryGenerator } from '../lib/corpus.ts';
import { table } from '../lib/markdown.ts';
import { log, phase } from '../lib/progress.ts';
import { createEnterpriseKey, startServer } from '../lib/server.ts';
import { fmt, median, percentile } from '../lib/stats.ts';

export const SETTINGS: readonly SqliteSynchronous[] = SQLITE_SYNCHRONOUS;

export interface DurabilityOptions {
  /** Where the databases live: fsync costs what this file system charges for it. */
  dir: string;
  inserts: number;
  rounds: number;
  httpSeconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface InsertSample {
  /** One committed insert each (memory row, tags, vector, outbox event: one transaction). */
  latenciesMs: number[];
  /** Inserts per second, one value per round. */
  perSecondByRound: number[];
}

export interface HttpSample {
  sequential: LoadResult;
  concurrent: LoadResult;
}

export type DurabilityResult = Record<SqliteSynchronous, { inserts: InsertSample; http: HttpSample | null }>;

const DIMS = 256;
const vector = () => Float32Array.from({ length: DIMS }, () => Math.random() - 0.5);
const SCOPE = { tenantId: 'bench', mode: 'live', workspace: 'default' } as const;

function memoryRow(i: number): Memory {
  const at = new Date();
  return {
    id: randomUUID(), clientId: null, scope: SCOPE, title: `Bench memory ${i}`,
    content: `Durability benchmark memory number ${i}, a sentence or two long like a typical note.`,
    memoryType: 'context', tags: ['bench'], metadata: { i }, topicId: null, createdAt: at, updatedAt: at,
    createdBy: 'bench', updatedBy: 'bench', accessCount: 0, lastAccessed: null,
    validFrom: at, validUntil: null, supersededBy: null, version: 1,
  };
}

/**
 * Repository level: one insert after another, each its own commit, so each pays the commit's sync. Rounds alternate
 * the order of the settings so that drift on a shared machine falls on both.
 */
async function measureInserts(o: DurabilityOptions, workDir: string): Promise<Record<SqliteSynchronous, InsertSample>> {
  const samples: Record<SqliteSynchronous, InsertSample> = { full: { latenciesMs: [], perSecondByRound: [] }, normal: { latenciesMs: [], perSecondByRound: [] } };
  const bar = phase('repository inserts', o.rounds * SETTINGS.length * o.inserts, 'inserts');
  for (let round = 0; round < o.rounds; round++) {
    const order = round % 2 === 0 ? SETTINGS : [...SETTINGS].reverse();
    for (const setting of order) {
      const storage = createSqliteStorage({ file: join(workDir, `${setting}.db`), synchronous: setting });
      if (storage.synchronous !== setting) throw new Error(`opened with ${setting}, database reports ${storage.synchronous}`);
      const started = performance.now();
      for (let i = 0; i < o.inserts; i++) {
        const row = memoryRow(i);
        const v = vector();
        const t0 = performance.now();
        await storage.memories.insert(row, { modelId: 'bench', vector: v });
        samples[setting].latenciesMs.push(performance.now() - t0);
        bar.increment();
      }
      samples[setting].perSecondByRound.push(o.inserts / ((performance.now() - started) / 1000));
      await storage.close();
    }
  }
  bar.stop();
  return samples;
}

/** G1 creates over HTTP against `npm start`-style servers, one per setting: one connection (latency), then many. */
async function measureHttp(o: DurabilityOptions, setting: SqliteSynchronous): Promise<HttpSample> {
  const server = await startServer('hashing', { env: { MNEMO_SQLITE_SYNCHRONOUS: setting }, parentDir: o.dir });
  try {
    const apiKey = await createEnterpriseKey(server, 'hashing');
    const next = memoryGenerator(0xd00d);
    const pool = Array.from({ length: 2000 }, () => JSON.stringify(next()));
    let c = 0;
    const run = async (connections: number) => {
      const r = await measure({
        label: `HTTP ${setting}, ${connections} conn.`, baseUrl: server.url, apiKey, path: MEMORIES_PATH,
        nextBody: () => pool[c++ % pool.length]!, connections, durationSeconds: o.httpSeconds, warmupSeconds: o.warmupSeconds,
      });
      assertClean(`HTTP ${setting}`, r);
      return r;
    };
    const sequential = await run(1);
    const concurrent = await run(o.connections);
    await server.stop();
    return { sequential, concurrent };
  } finally {
    await server.dispose();
  }
}

export async function runDurabilitySuite(o: DurabilityOptions): Promise<DurabilityResult> {
  const workDir = await mkdtemp(join(o.dir, 'mnemo-durability-'));
  try {
    const inserts = await measureInserts(o, workDir);
    const http: Partial<Record<SqliteSynchronous, HttpSample>> = {};
    if (o.httpSeconds > 0) {
      for (const setting of SETTINGS) {
        log(`HTTP: server with MNEMO_SQLITE_SYNCHRONOUS=${setting}`);
        http[setting] = await measureHttp(o, setting);
      }
    }
    return Object.fromEntries(SETTINGS.map((s) => [s, { inserts: inserts[s], http: http[s] ?? null }])) as DurabilityResult;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** The file system holding `dir` (longest mount point that contains it), from /proc/mounts where there is one. */
export async function fileSystemOf(dir: string): Promise<string> {
  try {
    const path = await realpath(dir);
    const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').map((l) => l.split(' ')).filter((f) => f.length >= 3);
    const best = mounts.filter(([, point]) => path === point || path.startsWith(point === '/' ? '/' : `${point}/`))
      .sort((a, b) => b[1]!.length - a[1]!.length)[0];
    return best ? `${best[2]} (${best[0]} on ${best[1]})` : 'unknown';
  } catch {
    return 'unknown';
  }
}

const ratio = (a: number, b: number) => `${fmt(a / b)}×`;

export function durabilityTables(r: DurabilityResult): string {
  const [full, normal] = [r.full, r.normal];
  const ins = (s: InsertSample) => ({ p50: median(s.latenciesMs), p99: percentile(s.latenciesMs, 99), rate: median(s.perSecondByRound) });
  const f = ins(full.inserts);
  const n = ins(normal.inserts);
  const parts = [
    '**Repository inserts** (one memory per commit: row, tag, 256-dim vector, outbox event):',
    '',
    table(['setting', 'inserts/s (median of rounds)', 'p50 ms', 'p99 ms'], [
      ['full (default)', fmt(f.rate, 0), fmt(f.p50), fmt(f.p99)],
      ['normal', fmt(n.rate, 0), fmt(n.p50), fmt(n.p99)],
      ['normal ÷ full (speed-up)', ratio(n.rate, f.rate), ratio(f.p50, n.p50), ratio(f.p99, n.p99)],
    ], 'lrrr'),
  ];
  if (full.http && normal.http) {
    const row = (name: string, h: HttpSample) => [name, fmt(h.sequential.perSecond, 0), fmt(h.sequential.p50Ms), fmt(h.sequential.p99Ms),
      fmt(h.concurrent.perSecond, 0), fmt(h.concurrent.p50Ms), fmt(h.concurrent.p99Ms)];
    parts.push('', '**G1 `POST /api/v1/memories` over HTTP** (hashing embedder; one connection, then several):', '',
      table(['setting', '1 conn. req/s', 'p50 ms', 'p99 ms', 'N conn. req/s', 'p50 ms', 'p99 ms'], [
        row('full (default)', full.http), row('normal', normal.http),
        ['normal ÷ full (speed-up)', ratio(normal.http.sequential.perSecond, full.http.sequential.perSecond),
          ratio(full.http.sequential.p50Ms, normal.http.sequential.p50Ms), ratio(full.http.sequential.p99Ms, normal.http.sequential.p99Ms),
          ratio(normal.http.concurrent.perSecond, full.http.concurrent.perSecond),
          ratio(full.http.concurrent.p50Ms, normal.http.concurrent.p50Ms), ratio(full.http.concurrent.p99Ms, normal.http.concurrent.p99Ms)],
      ], 'lrrrrrr'));
  }
  return parts.join('\n');
}
