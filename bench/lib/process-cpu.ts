import { readdir, readFile } from 'node:fs/promises';

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

/** One thread of a process: its name, CPU time so far and time spent runnable but waiting for a core. */
export interface ThreadTimes {
  tid: number;
  name: string;
  /** On a CPU (ns), from /proc/<pid>/task/<tid>/schedstat. */
  runNs: number;
  /** Runnable, waiting on a run queue (ns): what a shared or oversubscribed machine adds to latency. */
  waitNs: number;
}

/** Every thread's times now (Linux; empty where /proc/<pid>/task is unreadable). */
export async function threadTimes(pid: number): Promise<ThreadTimes[]> {
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: ThreadTimes[] = [];
  for (const tid of tids) {
    try {
      const [sched, comm] = await Promise.all([
        readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'), readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8')]);
      const [run, wait] = sched.trim().split(' ').map(Number);
      out.push({ tid: Number(tid), name: comm.trim(), runNs: run!, waitNs: wait! });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/**
 * What each thread used between two readings: CPU and run-queue wait, in ms, busiest first (threads that used
 * under 1 ms left out). The main thread's tid is the pid.
 */
export function threadTimesBetween(pid: number, before: ThreadTimes[], after: ThreadTimes[]): string {
  const start = new Map(before.map((t) => [t.tid, t]));
  return after.map((t) => {
    const b = start.get(t.tid);
    return { ...t, run: (t.runNs - (b?.runNs ?? 0)) / 1e6, wait: (t.waitNs - (b?.waitNs ?? 0)) / 1e6 };
  }).filter((t) => t.run >= 1).sort((a, b) => b.run - a.run)
    .map((t) => `${t.tid === pid ? 'main' : t.name}(${t.tid}) cpu ${t.run.toFixed(0)} ms, waiting for a core ${t.wait.toFixed(0)} ms`)
    .join('\n');
}
