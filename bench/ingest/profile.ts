import { readFile } from 'node:fs/promises';

/** The parts of a V8 .cpuprofile (node --cpu-prof) that this reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  label: string;
  ms: number;
  /** Of the busy time (everything but idle). */
  share: number;
}

/**
 * Where a server's CPU time went, by the innermost frame of Mnemo's own code on each sampled stack (`src/` or
 * `dist/`, as `file:function`), so that time inside a native call (a SQLite statement with its FTS trigger, a COMMIT
 * and its fsync) counts for the Mnemo function that made the call. Stacks with no Mnemo frame count for the package
 * of their innermost frame (fastify, pino…) or as node internals, GC or idle. Samples of the first `skipMs` (start-up)
 * are left out. The V8 profiler samples the thread's stack whether it computes or waits in a system call, so a fsync
 * shows up as time in the function that committed.
 */
export async function profileShares(file: string, skipMs = 0): Promise<{ busyMs: number; idleMs: number; shares: ProfileShare[] }> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const labelCache = new Map<number, string>();

  const labelOf = (id: number): string => {
    const cached = labelCache.get(id);
    if (cached) return cached;
    const leaf = byId.get(id)!.callFrame;
    let label: string | undefined;
    if (leaf.functionName === '(idle)' || leaf.functionName === '(garbage collector)' || leaf.functionName === '(program)') {
      label = leaf.functionName;
    }
    let packageLabel: string | undefined;
    for (let at: number | undefined = id; !label && at !== undefined; at = parent.get(at)) {
      const { url, functionName } = byId.get(at)!.callFrame;
      const own = /\/(?:src|dist)\/(.+)\.(?:ts|js)$/.exec(url);
      if (own && !url.includes('/node_modules/')) label = `${own[1]}: ${functionName || '(anonymous)'}`;
      else if (!packageLabel) {
        const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
        if (pkg) packageLabel = `package ${pkg[1]}`;
        else if (url.startsWith('node:')) packageLabel = 'node internals';
      }
    }
    label ??= packageLabel ?? 'other (native)';
    labelCache.set(id, label);
    return label;
  };

  const totals = new Map<string, number>();
  let at = 0;
  profile.samples.forEach((id, k) => {
    const ms = (profile.timeDeltas[k] ?? 0) / 1000;
    at += ms;
    if (at < skipMs) return;
    const label = labelOf(id);
    totals.set(label, (totals.get(label) ?? 0) + ms);
  });
  const idleMs = totals.get('(idle)') ?? 0;
  totals.delete('(idle)');
  const busyMs = [...totals.values()].reduce((a, b) => a + b, 0);
  const shares = [...totals.entries()].map(([label, ms]) => ({ label, ms, share: ms / busyMs })).sort((a, b) => b.ms - a.ms);
  return { busyMs, idleMs, shares };
}
