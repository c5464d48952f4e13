/**
 * `npx tsx bench/search/filter-prefetch-cost.ts`: on bench/search/filtered.ts's store (run that first), what reading a
 * workspace's broad filter conditions ahead (sqlite-broad-conditions.ts) adds to the store's warmUp: warmUp's wall and
 * CPU time and the longest event-loop delay during it, without (`prefetchFiltersFrom` Infinity) and with (the
 * default), alternated `--rounds` times.
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Command } from 'commander';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';

const opts = new Command('bench:filter-prefetch-cost')
  .option('--dir <dir>', 'the store directory of bench/search/filtered.ts', '/tmp/mnemo-bench-filtered')
  .option('--rounds <n>', 'warmUps of each kind', '3')
  .parse().opts<{ dir: string; rounds: string }>();
const file = join(opts.dir, 'mnemo.db');
console.log(`${machineLine(describeMachine())}, load average ${loadAverage().toFixed(1)}\n`);
console.log('| broad conditions read ahead | warmUp wall | warmUp CPU | longest event-loop delay |');
console.log('|---|---:|---:|---:|');
for (let round = 0; round < Number(opts.rounds); round++) {
  for (const from of [Infinity, undefined]) {
    const storage = createSqliteStorage({ file, synchronous: 'normal', searchThreads: 2, ...(from ? { prefetchFiltersFrom: from } : {}) });
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await storage.warmUp();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    delay.disable();
    console.log(`| ${from ? 'no' : 'yes'} | ${ms.toFixed(0)} ms | ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms | ${(delay.max / 1e6).toFixed(0)} ms |`);
    await storage.close();
  }
}
