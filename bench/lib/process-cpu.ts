import { readFile } from 'node:fs/promises';

/**
 * CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat. Throughput on a shared
 * machine moves with whatever else runs; the CPU time a server spends per request moves much less, so the
 * benchmarks report both.
 */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime and stime
  // are the 14th and 15th fields of the line, in clock ticks (USER_HZ, 100 on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`unreadable /proc/${pid}/stat`);
  return ticks / CLOCK_TICKS_PER_SECOND;
}

const CLOCK_TICKS_PER_SECOND = 100;
