import { readdir, readFile } from 'node:fs/promises';

/** CPU seconds so far of each PostgreSQL process on this machine, by pid, split by what the process serves. */
export interface PostgresCpu {
  /** Backends connected to the named database (their process title is `postgres: USER DATABASE HOST(PORT) STATE`). */
  database: Map<number, number>;
  /** Seconds those backends spent runnable but waiting for a core (/proc/PID/schedstat): what a busy machine adds. */
  databaseWait: Map<number, number>;
  /** Every process called `postgres` (other databases' backends, the checkpointer, WAL writer, autovacuum…). */
  all: Map<number, number>;
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Reads /proc for the PostgreSQL server's processes (any user's: /proc/PID/stat and cmdline are world-readable), so
 * that a benchmark can say what the database's CPU did while it ran. Empty maps where there is no /proc.
 */
export async function postgresCpu(database: string): Promise<PostgresCpu> {
  const out: PostgresCpu = { database: new Map(), databaseWait: new Map(), all: new Map() };
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return out;
  }
  await Promise.all(entries.filter((e) => /^\d+$/.test(e)).map(async (pid) => {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') return;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
      out.all.set(Number(pid), seconds);
      const title = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ').trim();
      if (title.split(/\s+/)[2] !== database) return;
      out.database.set(Number(pid), seconds);
      const waitNs = Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[1]);
      out.databaseWait.set(Number(pid), waitNs / 1e9);
    } catch {
      // The process ended between the listing and the read.
    }
  }));
  return out;
}

/** CPU seconds used between two readings by the processes of `after` (those born meanwhile count from zero). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, seconds] of after) used += seconds - (before.get(pid) ?? 0);
  return used;
}
