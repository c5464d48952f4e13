import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { embeddingGenerated, memoryCreated, memoryDeleted, memoryUpdated } from '../../src/core/events/memory-events.ts';
import { createMemoryForget } from '../../src/core/memories/memory-forget.ts';
import type { Memory, StoredVector } from '../../src/core/memories/memory.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { memoryGenerator } from '../lib/corpus.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { fmt, median } from '../lib/stats.ts';

/**
 * `npx tsx bench/forget/run.ts`: what forgetting costs on SQLite (docs/api.md, G1 "Forgetting"; RELIABILITY.md).
 * - `secure`: per write, CPU time of repository inserts, content updates and deletes (each with its events) at a given
 *   workspace size, with SQLite's `PRAGMA secure_delete` and FTS5's `secure-delete` each off or on (`both` ships).
 * - `forget`: one forget of `--forget` memories (one transaction) in a workspace of twice as many, and its dry run.
 */
function whole(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`use a whole number >= ${min}`);
    return n;
  };
}

const program = new Command('npx tsx bench/forget/run.ts')
  .addOption(new Option('--part <which>', 'secure, forget or all').choices(['secure', 'forget', 'all']).default('all'))
  .addOption(new Option('--memories <n>', 'secure: memories inserted (half are then updated, the other half deleted)').argParser(whole(2)).default(10_000))
  .addOption(new Option('--rounds <n>', 'secure: rounds, alternating the order of the variants').argParser(whole(1)).default(3))
  .addOption(new Option('--variants <list>', 'secure: off, pragma, fts, both').default('off,pragma,fts,both'))
  .addOption(new Option('--forget <n>', 'forget: memories forgotten in one call').argParser(whole(1)).default(1000))
  .addOption(new Option('--concurrency <n>', 'writes in flight (they share group commits)').argParser(whole(1)).default(16))
  .parse();
const o = program.opts<{ part: string; memories: number; rounds: number; variants: string; forget: number; concurrency: number }>();

const scope = { tenantId: 't', mode: 'live' as const, workspace: 'w' };
const gen = memoryGenerator(11);
const vectorOf = (i: number): StoredVector => {
  const v = new Float32Array(256);
  for (let k = 0; k < 256; k++) v[k] = Math.sin(i + k);
  return { modelId: 'hashing-256', vector: v };
};
function memory(tags: string[] = []): Memory {
  const b = gen();
  const at = new Date();
  return {
    id: randomUUID(), clientId: null, scope, title: b.title, content: b.content, memoryType: 'context', tags: [...b.tags, ...tags],
    metadata: {}, topicId: null, createdAt: at, updatedAt: at, createdBy: 'u', updatedBy: 'u', accessCount: 0, lastAccessed: null,
    validFrom: at, validUntil: null, supersededBy: null, version: 1,
  };
}
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
async function inChunks(n: number, f: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i += o.concurrency) await Promise.all(Array.from({ length: Math.min(o.concurrency, n - i) }, (_, k) => f(i + k)));
}
async function insertAll(storage: Storage, memories: readonly Memory[]): Promise<void> {
  await inChunks(memories.length, (i) => {
    const v = vectorOf(i);
    return storage.memories.insert(memories[i]!, v, (m) => [memoryCreated(m), embeddingGenerated(m, v, 'memory.created', m.createdAt)]);
  });
}

/** Opening SQLite turns `PRAGMA secure_delete` on (sqlite.database.ts); the `off` and `fts` variants skip that call. */
let skipSecureDeletePragma = false;
const pragma = Database.prototype.pragma;
Database.prototype.pragma = function patched(this: Database.Database, source: string, options?: Database.PragmaOptions) {
  if (skipSecureDeletePragma && source === 'secure_delete = ON') return [];
  return pragma.call(this, source, options);
};

async function secureRun(variant: string): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-forget-bench-'));
  const file = join(dir, 'mnemo.db');
  await createSqliteStorage({ file }).close();
  const raw = new Database(file);
  raw.exec(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', ${variant === 'fts' || variant === 'both' ? 1 : 0})`);
  raw.close();
  skipSecureDeletePragma = variant === 'off' || variant === 'fts';
  const storage = createSqliteStorage({ file });
  const n = o.memories;
  const memories = Array.from({ length: n }, () => memory());
  const replacements = Array.from({ length: n / 2 }, () => gen().content);
  const out: Record<string, number> = {};
  let t = cpuMs();
  await insertAll(storage, memories);
  out.insert = (cpuMs() - t) / n;
  t = cpuMs();
  await inChunks(n / 2, (i) => storage.memories.update(scope, memories[i]!.id, { content: replacements[i]! }, new Date(), 'u', vectorOf(n + i),
    (m) => [memoryUpdated(m, { content: true, metadata: false, tags: false })]));
  out.update = (cpuMs() - t) / (n / 2);
  t = cpuMs();
  await inChunks(n / 2, (i) => {
    const at = new Date();
    return storage.memories.delete(scope, memories[n - 1 - i]!.id, { at, by: 'u', reason: 'user_request' }, (m) => [memoryDeleted(m, at, 'u', 'user_request')]);
  });
  out.delete = (cpuMs() - t) / (n / 2);
  await storage.close();
  skipSecureDeletePragma = false;
  rmSync(dir, { recursive: true, force: true });
  return out;
}

async function forgetRun(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-forget-bench-'));
  const storage = createSqliteStorage({ file: join(dir, 'mnemo.db') });
  await insertAll(storage, [...Array.from({ length: o.forget }, () => memory(['doomed'])), ...Array.from({ length: o.forget }, () => memory())]);
  const principal: Principal = { keyId: 'k', tenantId: 't', userId: 'u', tier: 'enterprise', mode: 'live', scopes: new Set(), expiresAt: null };
  const forget = createMemoryForget({ store: storage.memories, limits: { memoryWrite: async () => null }, clock: new ManualClock(Date.now()) });
  let t = performance.now();
  const preview = await forget.forget(scope, principal, { tagsAny: ['doomed'] }, { dryRun: true });
  const dryMs = performance.now() - t;
  t = performance.now();
  const done = await forget.forget(scope, principal, { tagsAny: ['doomed'] }, { dryRun: false });
  const ms = performance.now() - t;
  const deleted = done.dryRun ? 0 : done.deleted;
  console.log(`| forget of ${fmt(deleted, 0)} memories (one transaction) in a workspace of ${fmt(2 * o.forget, 0)} | dry run ${fmt(dryMs, 0)} ms `
    + `(count ${preview.dryRun ? preview.count : '?'}); forget ${fmt(ms, 0)} ms, ${fmt((ms / deleted) * 1000, 0)} µs per memory |`);
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

const loadAtStart = loadAverage();
console.log(`- Machine: ${machineLine(describeMachine())}; 1-minute load average ${fmt(loadAtStart, 1)} at the start`);
if (o.part !== 'forget') {
  const variants = o.variants.split(',');
  const results: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < o.rounds; r++) {
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      for (const [k, x] of Object.entries(await secureRun(v))) ((results[v] ??= {})[k] ??= []).push(x);
    }
  }
  console.log(`\n| ${fmt(o.memories, 0)} memories, CPU ms per write (median of ${o.rounds}) | ${variants.join(' | ')} |`);
  console.log(`|---|${variants.map(() => '---').join('|')}|`);
  for (const k of ['insert', 'update', 'delete']) {
    console.log(`| ${k} | ${variants.map((v) => fmt(median(results[v]![k]!), 2)).join(' | ')} |`);
  }
}
if (o.part !== 'secure') {
  console.log('');
  await forgetRun();
}
console.log(`- 1-minute load average ${fmt(loadAverage(), 1)} at the end`);
