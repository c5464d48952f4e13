import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

/**
 * Setup file of every vitest project: with MNEMO_TEST_CPU_LOG=<file> set, appends one JSON line per test file with
 * the CPU it cost, which vitest's own per-file times (wall time) do not tell apart from waiting: `cpu_ms` is the test
 * process's, worker threads included (process.cpuUsage), and `children_cpu_ms` that of the processes it started and
 * that have ended (/proc/self/stat cutime + cstime, Linux; servers still running are not counted). Without the
 * variable it does nothing.
 */
const LOG = process.env.MNEMO_TEST_CPU_LOG;
const ROOT = `${import.meta.dirname}/../..`;

/** CPU of the ended child processes, in milliseconds (clock ticks of 10 ms on Linux); 0 where /proc is missing. */
function childrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5), cutime and cstime, are the 14th and 15th after the command name.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

if (LOG) {
  // From here, before the test file is imported (setup files run first, for every file): its import counts too.
  const started = { cpu: process.cpuUsage(), children: childrenCpuMs(), at: performance.now() };
  afterAll(() => {
    const cpu = process.cpuUsage(started.cpu);
    appendFileSync(LOG, `${JSON.stringify({
      file: relative(ROOT, expect.getState().testPath ?? ''),
      store: process.env.MNEMO_TEST_STORE ?? 'sqlite',
      pid: process.pid,
      wall_ms: Math.round(performance.now() - started.at),
      cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
      children_cpu_ms: childrenCpuMs() - started.children,
    })}\n`);
  });
}
