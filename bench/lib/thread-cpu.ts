import { readdir, readFile } from 'node:fs/promises';

/** CPU milliseconds (user + system) used so far by each thread of a process, by thread id; empty without Linux's /proc. */
export type ThreadTimes = Map<string, number>;

/** Linux reports thread times in clock ticks of USER_HZ, which is 100 on every architecture Node runs on. */
const MS_PER_TICK = 10;

export async function threadTimes(pid: number): Promise<ThreadTimes> {
  const times: ThreadTimes = new Map();
  let tids: string[];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  for (const tid of tids) {
    try {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state is [0], utime [11], stime [12].
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      times.set(tid, (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return times;
}

/** Where a process's CPU went between two readings: its main thread, its `busiest` busiest other threads, the rest. */
export interface CpuSplit {
  main: number;
  /** The `busiest` threads that used the most CPU (the model's worker threads, which dwarf every other thread). */
  busiest: number;
  other: number;
}

export function cpuSplit(pid: number, before: ThreadTimes, after: ThreadTimes, busiest: number): CpuSplit | undefined {
  if (after.size === 0) return undefined;
  const used = [...after].map(([tid, ms]) => ({ tid, ms: ms - (before.get(tid) ?? 0) }));
  const main = used.find((t) => t.tid === String(pid))?.ms ?? 0;
  const others = used.filter((t) => t.tid !== String(pid)).map((t) => t.ms).sort((a, b) => b - a);
  const top = others.slice(0, busiest).reduce((a, b) => a + b, 0);
  const rest = others.slice(busiest).reduce((a, b) => a + b, 0);
  return { main, busiest: top, other: rest };
}
