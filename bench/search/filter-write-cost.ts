/**
 * `npx tsx bench/search/filter-write-cost.ts --before DIR`: what the filter indexes' triggers (memory_metadata, the
 * filter versions and their change log: migrations 22 and 23) cost a single create on SQLite. This tree and a second
 * copy of the sources (DIR/src) each create memories one at a time (one COMMIT each, `synchronous=normal`, hashing
 * vectors, metadata of four index rows) on fresh stores of their own, interleaved round by round in one process, the
 * order alternating each round: per-create times from one run, side by side. Then the change log's own share: the CPU
 * a memory row and its triggers take (2,000 rows in one transaction, no COMMIT in the time) on this tree's schema with
 * and without migration 23, interleaved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import Database from 'better-sqlite3';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { migrateSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { MIGRATIONS } from '../../src/adapters/storage/sqlite/migrations.ts';
import { INSERT_MEMORY_SQL, memoryParams } from '../../src/adapters/storage/sqlite/sqlite-memory-row.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { memoryGenerator } from '../lib/corpus.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { fmt, median } from '../lib/stats.ts';

const opts = new Command('bench:filter-write-cost')
  .requiredOption('--before <dir>', 'the second source tree (DIR/src)')
  .option('--creates <n>', 'creates per round and build', '200')
  .option('--rounds <n>', 'measured rounds (after one warm-up round)', '10')
  .option('--dims <n>', 'hashing embedder dimensions', '256')
  .parse().opts<{ before: string; creates: string; rounds: string; dims: string }>();
const creates = Number(opts.creates);
const dims = Number(opts.dims);
const scope = { tenantId: 'bench', mode: 'live', workspace: 'writes' } as Scope;

const url = pathToFileURL(resolve(opts.before, 'src/adapters/storage/sqlite/sqlite.storage.ts')).href;
const before = await import(url) as { createSqliteStorage: typeof createSqliteStorage };
const builds = [{ name: 'before', create: before.createSqliteStorage }, { name: 'after', create: createSqliteStorage }];
const dir = mkdtempSync(join(tmpdir(), 'mnemo-filter-write-cost-'));
const next = memoryGenerator(11);
// Wall time and this process's CPU time (user + system: steadier than wall time on a loaded machine) per create.
const perCreate = new Map<string, { wall: number[]; cpu: number[] }>(builds.map((b) => [b.name, { wall: [], cpu: [] }]));

for (let round = 0; round <= Number(opts.rounds); round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const build of order) {
    const storage = build.create({ file: join(dir, `${build.name}-${round}.db`), synchronous: 'normal' });
    const items = Array.from({ length: creates }, () => {
      const memory = newMemory();
      return { memory, vector: { modelId: `hashing:v1-${dims}`, vector: hashEmbed(`${memory.title}\n\n${memory.content}`, dims) } };
    });
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (const { memory, vector } of items) await storage.memories.insert(memory, vector);
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - t0) / creates;
    await storage.close();
    if (round > 0) {
      perCreate.get(build.name)!.wall.push(wall);
      perCreate.get(build.name)!.cpu.push((cpu.user + cpu.system) / 1000 / creates);
    }
  }
}

// The rows alone: migration 23's triggers against the schema before it, same rows, CPU time.
const rowCpu = new Map<string, number[]>([['without', []], ['with', []]]);
const rowRatios: number[] = [];
for (let round = 0; round <= 2 * Number(opts.rounds); round++) {
  const cpu = new Map<string, number>();
  const rows = Array.from({ length: 2000 }, () => memoryParams(newMemory(), 'hash'));
  for (const kind of round % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
    const db = new Database(join(dir, `rows-${kind}-${round}.db`));
    db.pragma('journal_mode = WAL');
    migrateSqlite(db, kind === 'with' ? MIGRATIONS : MIGRATIONS.filter((m) => m.version !== 23));
    const insert = db.prepare(INSERT_MEMORY_SQL);
    const cpu0 = process.cpuUsage();
    db.transaction(() => { for (const row of rows) insert.run(row); })();
    const used = process.cpuUsage(cpu0);
    db.close();
    cpu.set(kind, (used.user + used.system) / rows.length);
    if (round > 0) rowCpu.get(kind)!.push(cpu.get(kind)!);
  }
  if (round > 0) rowRatios.push(cpu.get('with')! / cpu.get('without')!);
}
rmSync(dir, { recursive: true, force: true });

console.log(`${creates} single creates x ${opts.rounds} rounds a build, hashing ${dims}, synchronous=normal, interleaved; `
  + `${machineLine(describeMachine())}, load average ${loadAverage().toFixed(1)}`);
for (const kind of ['wall', 'cpu'] as const) {
  const [was, now] = builds.map((b) => median(perCreate.get(b.name)![kind]));
  console.log(`${kind === 'wall' ? 'wall time' : 'CPU time '} a create (median of the rounds' means): before ${fmt(was!, 3)} ms, after ${fmt(now!, 3)} ms, `
    + `${((now! / was! - 1) * 100).toFixed(1)} %`);
}
console.log(`CPU time a memory row and its triggers (2,000 a transaction, ${rowRatios.length} rounds): without migration 23 `
  + `${fmt(median(rowCpu.get('without')!), 1)} µs, with ${fmt(median(rowCpu.get('with')!), 1)} µs, `
  + `${((median(rowRatios) - 1) * 100).toFixed(1)} % (median of the rounds' ratios)`);

function newMemory(): Memory {
  const body = next();
  const at = new Date();
  return {
    id: randomUUID(), clientId: null, scope, title: body.title, content: body.content, memoryType: body.memory_type, tags: body.tags,
    metadata: { project: 'mnemo', source: { kind: 'web' } }, topicId: null, createdAt: at, updatedAt: at, createdBy: 'bench',
    updatedBy: 'bench', accessCount: 0, lastAccessed: null, validFrom: at, validUntil: null, supersededBy: null, version: 1,
  };
}
