/**
 * `npx tsx bench/search/filter-recheck-cost.ts`: on bench/search/filtered.ts's store (run that first), what a cached
 * filter result pays to be brought forward over k changed memories (the filter re-checked on those rows, by primary
 * key: keptAmong in sqlite-memory.repository.ts) against reading the filter's seqs again (allowedSeqs' index reads),
 * the figures behind SqliteFilterCache's limit. SQL alone, median of 20 runs each.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Command } from 'commander';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { median } from '../lib/stats.ts';

const opts = new Command('bench:filter-recheck-cost')
  .option('--dir <dir>', 'the store directory of bench/search/filtered.ts', '/tmp/mnemo-bench-filtered')
  .parse().opts<{ dir: string }>();
const db = new Database(join(opts.dir, 'mnemo.db'), { readonly: true });
const scope = ['bench', 'live', 'filtered'] as const;
const seqs = db.prepare('SELECT seq FROM memories WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck().all(...scope) as number[];
const ms = (run: () => unknown[]): { ms: number; rows: number } => {
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    rows = run().length;
    times.push(performance.now() - t0);
  }
  return { ms: median(times), rows };
};

const reads = {
  'tag, 50 %': () => db.prepare('SELECT memory_seq FROM memory_tags WHERE tag IN (?)').pluck().all('broad'),
  'metadata, 99 %': () => db.prepare('SELECT memory_seq FROM memory_metadata WHERE key = ? AND value IN (?)').pluck().all('$.project', 'common'),
  'type, 1 of 6': () => db.prepare('SELECT m.seq FROM memories m WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND m.memory_type IN (?)')
    .pluck().all(...scope, 'knowledge'),
};
const recheck = {
  'tag, 50 %': ['EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_seq = m.seq AND t.tag IN (?))', ['broad']],
  'metadata, 99 %': ['EXISTS (SELECT 1 FROM memory_metadata x WHERE x.key = ? AND x.value IN (?) AND x.memory_seq = m.seq)', ['$.project', 'common']],
  'type, 1 of 6': ['m.memory_type IN (?)', ['knowledge']],
} as const;

console.log(`${seqs.length.toLocaleString('en')} memories; ${machineLine(describeMachine())}, load average ${loadAverage().toFixed(1)}\n`);
console.log('| filter | read again | per seq read | re-check 16 | re-check 256 | re-check 2,048 | per memory re-checked (2,048) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [name, read] of Object.entries(reads)) {
  const again = ms(read);
  const [condition, params] = recheck[name as keyof typeof recheck];
  const statement = db.prepare(`SELECT m.seq FROM memories m WHERE m.seq IN (SELECT value FROM json_each(?))
    AND +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ? AND ${condition}`).pluck();
  // Changed memories spread over the workspace (a stride prime to its size), as writes over time would be.
  const checks = [16, 256, 2048].map((k) => {
    const changed = JSON.stringify(Array.from({ length: k }, (_, i) => seqs[(i * 7919) % seqs.length]));
    return ms(() => statement.all(changed, ...scope, ...params)).ms;
  });
  console.log(`| ${name} | ${again.ms.toFixed(2)} ms | ${(again.ms / again.rows * 1000).toFixed(2)} µs | ${
    checks.map((c) => `${c.toFixed(3)} ms`).join(' | ')} | ${(checks[2]! / 2048 * 1000).toFixed(1)} µs |`);
}
db.close();
