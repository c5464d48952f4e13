import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * Setup file of every vitest project: with MNEMO_TEST_CPU_LOG=<file> set, appends one JSON line per test file with
 * the CPU it cost, which vitest's own per-file times (wall time) do not tell apart from waiting: `cpu_ms` is the test
 * process's, worker threads included (process.cpuUsage), and `children_cpu_ms` that of the processes under it during
 * the file (Linux /proc), ended or still running: a server it left running, the process's shared Chromium
 * (test/dashboard/chromium.ts). Without the variable it does nothing.
 */
const LOG = process.env.MNEMO_TEST_CPU_LOG;
const ROOT = `${import.meta.dirname}/../..`;

/**
 * CPU so far of the processes under this one, in milliseconds (Linux /proc; 0 elsewhere): that of the ended children
 * (cutime + cstime of this process), and of each live descendant its own and its ended children's (utime + stime +
 * cutime + cstime). An ended process's time moves into its parent's, so each millisecond counts once, in whichever
 * file it was spent, also for a browser whose renderers come and go. One exception: a descendant that outlives its
 * parent leaves the tree (init adopts it), and what was counted for it is taken back in the file where that happens,
 * whose `children_cpu_ms` may then be negative (a closing Chromium's last processes): that is no CPU of the file's.
 */
function childrenCpuMs(): number {
  const ticks = new Map<number, { parent: number; own: number; children: number }>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // proc(5): ppid is field 4, utime to cstime fields 14 to 17 (the 2nd, and the 12th to 15th after the name).
        ticks.set(Number(entry), { parent: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) });
      } catch { /* ended meanwhile */ }
    }
  } catch {
    return 0;
  }
  let total = ticks.get(process.pid)?.children ?? 0;
  const tree = [process.pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, t] of ticks) {
      if (t.parent === tree[i]) { total += t.own + t.children; tree.push(pid); }
    }
  }
  // Clock ticks of 10 ms on Linux.
  return total * 10;
}

if (LOG) {
  // From here, before the test file is imported (setup files run first, for every file): its import counts too.
  const started = { cpu: process.cpuUsage(), children: childrenCpuMs(), at: performance.now() };
  // The file's hooks and tests start once it is imported: `import_ms` tells the import (the app's, in a worker's
  // first file) from the tests' own time when comparing runs.
  let importedAt = started.at;
  beforeAll(() => { importedAt = performance.now(); });
  afterAll(() => {
    const cpu = process.cpuUsage(started.cpu);
    appendFileSync(LOG, `${JSON.stringify({
      file: relative(ROOT, expect.getState().testPath ?? ''),
      store: process.env.MNEMO_TEST_STORE ?? 'sqlite',
      pid: process.pid,
      wall_ms: Math.round(performance.now() - started.at),
      import_ms: Math.round(importedAt - started.at),
      cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
      children_cpu_ms: childrenCpuMs() - started.children,
    })}\n`);
  });
}
