/**
 * `npx tsx bench/search/filtered.ts`: SQLite similarity search (the store's searchSimilar, no HTTP) with no filter and
 * with each kind of filter (tags and metadata, broad and narrow; type, topic, dates), interleaved in one process on one
 * store of hashing vectors (issue 39: a filter never makes a search slower than the unfiltered one). Every search
 * leaves out the memories not valid now, as the core asks (one in 1,000 has ended). `--before DIR` runs a second copy
 * of the sources (DIR/src, e.g. an older checkout) on the same store file beside this one, interleaved query by
 * query, for before/after figures from one run. `--cold` changes one memory's metadata before every round, so that
 * every search is its filter's first after a write; `--uncached` gives every search a filter no search used before (a
 * property no store reads, unique to the search: a cache keyed on the filter finds nothing), its first search;
 * `--write-between` changes one memory's tags or metadata before every search (a workspace written to all the time).
 * None changes an answer. Beside wall time, each search's CPU time (the process's, scan threads included: nothing else
 * runs meanwhile), which other jobs on a loaded machine change less. `--gc-between` collects garbage before every
 * search, untimed: with `--before`, neither build then pays in its searches for the other's garbage (a build that
 * reads 100,000 seqs a search leaves much).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { Memory, MemoryFilter } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { memoryGenerator, searchQueries } from '../lib/corpus.ts';
import { forceGc } from '../lib/gc.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import { fmt, median } from '../lib/stats.ts';

const opts = new Command('bench:filtered')
  .option('--size <n>', 'memories in the one workspace', '100000')
  .option('--dims <n>', 'hashing embedder dimensions', '512')
  .option('--rounds <n>', 'measured queries per case (after 3 warm-up rounds)', '40')
  .option('--min-cosine <x>', 'the searches\' minCosine (-1: every row counts, as G1 with threshold 0)', '-1')
  .option('--threads <n>', 'scan threads', '2')
  .option('--dir <dir>', 'the store directory (seeded when it holds no store)', '/tmp/mnemo-bench-filtered')
  .option('--before <dir>', 'a second source tree (DIR/src) measured beside this one')
  .option('--cold', 'a write before every round: each filter\'s first search after a write')
  .option('--uncached', 'every search\'s filter new to the process (the first search of a filter)')
  .option('--write-between', 'a write (one memory\'s tags or metadata) before every search')
  .option('--gc-between', 'a full garbage collection before every search (untimed): a build\'s garbage is not collected in the other\'s searches')
  .parse().opts<{
    size: string; dims: string; rounds: string; minCosine: string; threads: string; dir: string; before?: string; cold?: boolean; uncached?: boolean;
    writeBetween?: boolean; gcBetween?: boolean;
  }>();
const size = Number(opts.size);
const dims = Number(opts.dims);
const modelId = `hashing:v1-${dims}`;
const scope = { tenantId: 'bench', mode: 'live', workspace: 'filtered' } as Scope;
const file = join(opts.dir, 'mnemo.db');

/** Seeded memories are created one second apart from this moment on. */
const firstCreated = Date.UTC(2026, 0, 1);
const cases: Record<string, MemoryFilter> = {
  'no filter': {},
  'tag, 50 %': { tagsAny: ['broad'] },
  'tag, 1 %': { tagsAny: ['narrow'] },
  'metadata, 99 %': { metadata: { project: 'common' } },
  'metadata, 1 %': { metadata: { project: 'rare' } },
  'type, 1 of 6': { types: ['knowledge'] },
  'topic, 1 %': { topicId: 'bench-topic' },
  'dates, 10 %': { createdFrom: new Date(firstCreated + size * 400), createdTo: new Date(firstCreated + size * 500 - 1) },
};

if (!existsSync(file)) {
  mkdirSync(opts.dir, { recursive: true });
  const storage = createSqliteStorage({ file, synchronous: 'normal' });
  const next = memoryGenerator(42);
  log(`seeding ${size} memories x ${dims}`);
  for (let done = 0; done < size;) {
    const n = Math.min(1000, size - done);
    const steps = Array.from({ length: n }, (_, j) => {
      const i = done + j;
      const body = next();
      const at = new Date(firstCreated + i * 1000);
      // Every other memory has tag `broad`, one in 100 `narrow`; one in 100 has metadata project "rare", one in 100
      // topic `bench-topic`; one in 1,000 has ended.
      const tags = [...body.tags, ...(i % 2 === 0 ? ['broad'] : []), ...(i % 100 === 7 ? ['narrow'] : [])];
      const memory: Memory = {
        id: randomUUID(), clientId: null, scope, title: body.title, content: body.content, memoryType: body.memory_type, tags,
        metadata: { project: i % 100 === 3 ? 'rare' : 'common' }, topicId: i % 100 === 11 ? 'bench-topic' : null, createdAt: at,
        updatedAt: at, createdBy: 'bench', updatedBy: 'bench', accessCount: 0, lastAccessed: null, validFrom: at,
        validUntil: i % 1000 === 5 ? new Date(at.getTime() + 1) : null, supersededBy: null, version: 1,
      };
      return { kind: 'insert' as const, memory, vector: { modelId, vector: hashEmbed(`${body.title}\n\n${body.content}`, dims) } };
    });
    await storage.memories.applyAtomically(scope, steps);
    done += n;
  }
  await storage.close();
}

type Storage = ReturnType<typeof createSqliteStorage>;
const builds: { name: string; storage: Storage }[] = [];
if (opts.before) {
  const url = pathToFileURL(resolve(opts.before, 'src/adapters/storage/sqlite/sqlite.storage.ts')).href;
  const before = await import(url) as { createSqliteStorage: typeof createSqliteStorage };
  builds.push({ name: 'before', storage: before.createSqliteStorage({ file, synchronous: 'normal', searchThreads: Number(opts.threads) }) });
}
builds.push({ name: opts.before ? 'after' : 'this build', storage: createSqliteStorage({ file, synchronous: 'normal', searchThreads: Number(opts.threads) }) });
// As a server starts: every workspace's index loaded (and whatever else a build prepares then) before the first search.
for (const b of builds) await b.storage.warmUp();

const vectors = searchQueries(7, 200).map((q) => hashEmbed(q, dims));
// --cold, --write-between: the memory whose metadata or tags are rewritten (its project and its tags `broad` and
// `narrow` unchanged: the answers stay the same), through the last build (the vectors stay: no build reloads them).
const rewritten = opts.cold || opts.writeBetween
  ? (await builds.at(-1)!.storage.memories.list(scope, { filter: {}, limit: 1, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).items[0]!
  : null;
let writes = 0;
async function rewrite(): Promise<void> {
  const patch = writes % 2 === 0
    ? { metadata: { ...rewritten!.metadata, write: writes } }
    : { tags: writes % 4 === 1 ? [...rewritten!.tags, 'rewritten'] : rewritten!.tags };
  writes++;
  await builds.at(-1)!.storage.memories.update(scope, rewritten!.id, patch, new Date(), 'bench', null);
}
const minCosine = Number(opts.minCosine);
const rounds = Number(opts.rounds);
const times = new Map<string, number[]>();
const totals = new Map<string, number[]>();
const ratios = new Map<string, number[]>();
const cpuTimes = new Map<string, number[]>();
const cpuRatios = new Map<string, number[]>();
let searches = 0;
for (let round = 0; round < rounds + 3; round++) {
  // The order alternates every round, so that neither a case nor a build always follows the same one; both builds
  // answer the same query of a case in a round, and must agree on its total.
  const order = Object.keys(cases).flatMap((c) => builds.map((b) => ({ c, b })));
  if (round % 2 === 1) order.reverse();
  if (opts.cold) await rewrite();
  const roundTotals = new Map<string, number>();
  const roundTimes = new Map<string, number>();
  const roundCpu = new Map<string, number>();
  for (const { c, b } of order) {
    if (opts.writeBetween) await rewrite();
    // What the previous search left for later (a filter read for the next search) runs now, untimed, then its garbage
    // is collected.
    await new Promise((resolve) => setImmediate(resolve));
    if (opts.gcBetween) forceGc();
    // One query a round for every case: a filter's search is compared with the unfiltered search of the same query.
    const vector = vectors[round % vectors.length]!;
    const filter = { ...cases[c], validAt: new Date(), ...(opts.uncached ? { benchSearch: searches++ } : {}) } as MemoryFilter;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const { total } = await b.storage.memories.searchSimilar(scope, { vector, modelId, limit: 10, minCosine, filter });
    const ms = performance.now() - t0;
    // The process's CPU over the search, its scan threads' included (nothing else runs meanwhile): what other jobs on
    // the machine change far less than wall time.
    const cpu = process.cpuUsage(cpu0);
    const key = `${c}|${b.name}`;
    if (round >= 3) times.set(key, [...(times.get(key) ?? []), ms]);
    if (round >= 3) roundTimes.set(key, ms);
    if (round >= 3) roundCpu.set(key, (cpu.user + cpu.system) / 1000);
    if (roundTotals.has(c) && roundTotals.get(c) !== total) throw new Error(`${c}: total ${total} on ${b.name}, ${roundTotals.get(c)} on the other build`);
    roundTotals.set(c, total);
    totals.set(c, [...(totals.get(c) ?? []), total]);
  }
  // Each search against the unfiltered one of its build in the same round (seconds apart): steadier than p50s
  // when other jobs load the machine.
  for (const [key, ms] of roundTimes) {
    const base = roundTimes.get(`no filter|${key.split('|')[1]}`)!;
    ratios.set(key, [...(ratios.get(key) ?? []), ms / base]);
    const cpu = roundCpu.get(key)!;
    cpuTimes.set(key, [...(cpuTimes.get(key) ?? []), cpu]);
    cpuRatios.set(key, [...(cpuRatios.get(key) ?? []), cpu / roundCpu.get(`no filter|${key.split('|')[1]}`)!]);
  }
}
for (const b of builds) await b.storage.close();

const machine = `${machineLine(describeMachine())}, load average ${loadAverage().toFixed(1)}`;
console.log(`${size.toLocaleString('en')} memories x ${dims} (hashing), limit 10, minCosine ${minCosine}, ${opts.threads} scan threads, `
  + `p50 of ${rounds} queries a case, interleaved${opts.cold ? ', a write before every round (cold)' : ''}${
    opts.uncached ? ', every filter new to the process (uncached)' : ''}${
    opts.writeBetween ? ', a write before every search' : ''}${opts.gcBetween ? ', a full collection before every search' : ''}; ${machine}\n`);
console.log(`| filter | total (median) | ${builds.map((b) => `${b.name} p50`).join(' | ')} | ${builds.map((b) => `${b.name} ÷ no filter`).join(' | ')} | ${
  builds.map((b) => `${b.name} CPU p50`).join(' | ')} | ${builds.map((b) => `${b.name} CPU ÷ no filter`).join(' | ')} |`);
console.log(`|---|---:|${builds.map(() => '---:').join('|')}|${builds.map(() => '---:').join('|')}|${builds.map(() => '---:').join('|')}|${
  builds.map(() => '---:').join('|')}|`);
const cell = (values: number[] | undefined, unit: string, digits?: number) =>
  (digits === undefined ? `${fmt(median(values!))}${unit}` : `${median(values!).toFixed(digits)}${unit}`);
for (const c of Object.keys(cases)) {
  const of = (map: Map<string, number[]>, b: { name: string }) => map.get(`${c}|${b.name}`);
  console.log(`| ${c} | ${median(totals.get(c)!).toLocaleString('en')} | ${builds.map((b) => cell(of(times, b), ' ms')).join(' | ')} | ${
    builds.map((b) => cell(of(ratios, b), '×', 2)).join(' | ')} | ${builds.map((b) => cell(of(cpuTimes, b), ' ms')).join(' | ')} | ${
    builds.map((b) => cell(of(cpuRatios, b), '×', 2)).join(' | ')} |`);
}
