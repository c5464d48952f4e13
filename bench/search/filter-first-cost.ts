/**
 * `npx tsx bench/search/filter-first-cost.ts`: on bench/search/filtered.ts's store (run that first), where the first
 * search of a filter (one the process has not cached) spends its time, per filter kind: listing the seqs the filter
 * keeps (allowedSeqs' SQL, row by row through the driver, and as one aggregated value: group_concat parsed in
 * JavaScript, json_group_array through JSON.parse), SQLite's walk alone (COUNT over the same rows), the bitmap and the
 * scan's row mask built from them; then, through the store after its warmUp (searchSimilar, threshold -1, 2 scan
 * threads), the unfiltered search, the filter's first search and its cached search, interleaved. Medians of `--runs`.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Command } from 'commander';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { KeyBitmap } from '../../src/adapters/storage/sqlite/vector-scan/allowed-keys.ts';
import type { MemoryFilter } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { searchQueries } from '../lib/corpus.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { median } from '../lib/stats.ts';

const opts = new Command('bench:filter-first-cost')
  .option('--dir <dir>', 'the store directory of bench/search/filtered.ts', '/tmp/mnemo-bench-filtered')
  .option('--dims <n>', 'its hashing dimensions', '512')
  .option('--runs <n>', 'runs of each measurement', '15')
  .parse().opts<{ dir: string; dims: string; runs: string }>();
const runs = Number(opts.runs);
const dims = Number(opts.dims);
const file = join(opts.dir, 'mnemo.db');
const db = new Database(file, { readonly: true });
const scopeParams = ['bench', 'live', 'filtered'] as const;
const scope = { tenantId: 'bench', mode: 'live', workspace: 'filtered' } as Scope;
const keys = Float64Array.from(db.prepare('SELECT seq FROM memories WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck().all(...scopeParams) as number[]);
const size = keys.length;
const firstCreated = Date.UTC(2026, 0, 1);
const SCOPE = 'm.tenant_id = ? AND m.mode = ? AND m.workspace = ?';

/** Each filter of filtered.ts, with the listing allowedSeqs runs for it (sqlite-memory.repository.ts). */
const cases: { name: string; filter: MemoryFilter; sql: string; params: unknown[] }[] = [
  { name: 'tag, 50 %', filter: { tagsAny: ['broad'] }, sql: 'SELECT memory_seq FROM memory_tags WHERE tag IN (?)', params: ['broad'] },
  { name: 'tag, 1 %', filter: { tagsAny: ['narrow'] }, sql: 'SELECT memory_seq FROM memory_tags WHERE tag IN (?)', params: ['narrow'] },
  { name: 'metadata, 99 %', filter: { metadata: { project: 'common' } }, sql: 'SELECT memory_seq FROM memory_metadata WHERE key = ? AND value IN (?)', params: ['$.project', 'common'] },
  { name: 'metadata, 1 %', filter: { metadata: { project: 'rare' } }, sql: 'SELECT memory_seq FROM memory_metadata WHERE key = ? AND value IN (?)', params: ['$.project', 'rare'] },
  { name: 'type, 1 of 6', filter: { types: ['knowledge'] }, sql: `SELECT m.seq FROM memories m WHERE ${SCOPE} AND m.memory_type IN (?)`, params: [...scopeParams, 'knowledge'] },
  { name: 'topic, 1 %', filter: { topicId: 'bench-topic' }, sql: `SELECT m.seq FROM memories m WHERE ${SCOPE} AND m.topic_id = ?`, params: [...scopeParams, 'bench-topic'] },
  {
    name: 'dates, 10 %', filter: { createdFrom: new Date(firstCreated + size * 400), createdTo: new Date(firstCreated + size * 500 - 1) },
    sql: `SELECT m.seq FROM memories m WHERE ${SCOPE} AND m.created_at >= ? AND m.created_at <= ?`,
    params: [...scopeParams, firstCreated + size * 400, firstCreated + size * 500 - 1],
  },
];

function time<T>(run: () => T): { ms: number; value: T } {
  const times: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    value = run();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), value };
}

/** Decimal seqs separated by commas into an array. */
function parseList(text: string | null): Float64Array {
  if (!text) return new Float64Array(0);
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 44) n++;
  const out = new Float64Array(n);
  let at = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) { out[at++] = value; value = 0; } else value = value * 10 + (c - 48);
  }
  out[at] = value;
  return out;
}

console.log(`${size.toLocaleString('en')} memories; ${machineLine(describeMachine())}, load average ${loadAverage().toFixed(1)}; median of ${runs} runs\n`);
console.log('| filter | seqs | rows through the driver | SQLite walk alone (COUNT) | group_concat + parse | json_group_array + JSON.parse | bitmap | mask |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const c of cases) {
  const rows = time(() => db.prepare(c.sql).pluck().all(...c.params) as number[]);
  const count = time(() => db.prepare(`SELECT COUNT(*) FROM (${c.sql})`).pluck().get(...c.params) as number);
  const concat = time(() => parseList(db.prepare(`SELECT group_concat(s) FROM (${c.sql.replace(/SELECT (\S+)/, 'SELECT $1 AS s')})`).pluck().get(...c.params) as string | null));
  const json = time(() => JSON.parse(db.prepare(`SELECT json_group_array(s) FROM (${c.sql.replace(/SELECT (\S+)/, 'SELECT $1 AS s')})`).pluck().get(...c.params) as string) as number[]);
  if (concat.value.length !== rows.value.length || json.value.length !== rows.value.length) throw new Error(`${c.name}: listings differ`);
  const bitmap = time(() => KeyBitmap.of(rows.value));
  const mask = time(() => bitmap.value.maskOf(keys, size));
  console.log(`| ${c.name} | ${count.value.toLocaleString('en')} | ${rows.ms.toFixed(2)} ms | ${count.ms.toFixed(2)} ms | ${concat.ms.toFixed(2)} ms | ${
    json.ms.toFixed(2)} ms | ${bitmap.ms.toFixed(2)} ms | ${mask.ms.toFixed(2)} ms |`);
}
db.close();

// Through the store: each round, the unfiltered search, then per filter its first search (a filter object no search
// used before: an extra property no store reads changes the cache's key) and the same filter again (cached).
const storage = createSqliteStorage({ file, synchronous: 'normal', searchThreads: 2 });
// As a server starts (the index loaded, the workspace's broad conditions read ahead), untimed.
const warm0 = performance.now();
await storage.warmUp();
const warmMs = performance.now() - warm0;
const modelId = `hashing:v1-${dims}`;
const vectors = searchQueries(7, 200).map((q) => hashEmbed(q, dims));
const search = (vector: Float32Array, filter: MemoryFilter) =>
  storage.memories.searchSimilar(scope, { vector, modelId, limit: 10, minCosine: -1, filter: { ...filter, validAt: new Date() } });
const times = new Map<string, number[]>();
const note = (key: string, ms: number) => times.set(key, [...(times.get(key) ?? []), ms]);
for (let round = 0; round < runs + 2; round++) {
  const vector = vectors[round % vectors.length]!;
  for (const c of [{ name: 'no filter', filter: {} }, ...cases]) {
    const unique = { ...c.filter, benchRound: round } as MemoryFilter;
    for (const kind of ['first', 'cached']) {
      if (c.name === 'no filter' && kind === 'cached') continue;
      const t0 = performance.now();
      await search(vector, c.name === 'no filter' ? {} : unique);
      if (round >= 2) note(`${c.name}|${kind}`, performance.now() - t0);
    }
  }
}
await storage.close();
const base = median(times.get('no filter|first')!);
console.log(`\nsearchSimilar after warmUp (${warmMs.toFixed(0)} ms), threshold -1, limit 10, 2 scan threads: no filter ${base.toFixed(2)} ms (p50)\n`);
console.log('| filter | first search | ÷ no filter | cached | ÷ no filter |');
console.log('|---|---:|---:|---:|---:|');
for (const c of cases) {
  const first = median(times.get(`${c.name}|first`)!);
  const cached = median(times.get(`${c.name}|cached`)!);
  console.log(`| ${c.name} | ${first.toFixed(2)} ms | ${(first / base).toFixed(2)}× | ${cached.toFixed(2)} ms | ${(cached / base).toFixed(2)}× |`);
}
