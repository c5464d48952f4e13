import { availableParallelism, cpus, release, totalmem, type } from 'node:os';

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
