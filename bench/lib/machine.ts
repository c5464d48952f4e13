import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  os: string;
  node: string;
}

export function describeMachine(): Machine {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
  };
}

export const machineLine = (m: Machine): string =>
  `${m.nproc} CPUs (nproc) · ${m.cpu} · ${m.memoryGiB} GiB RAM · ${m.os} · Node ${m.node}`;

/** The 1-minute load average (0 where the OS has none). On 2 CPUs, anything well above our own 2-3 busy threads is other work. */
export const loadAverage = (): number => loadavg()[0] ?? 0;
