/**
 * `npx tsx bench/scan/profile-phases.ts DIR [--top N] [--phase NAME]`: where each thread of a server spent its time in
 * each phase of a `bench:engine -- --cpu-prof DIR` run. Reads DIR/phases.json (the bench's phase marks, CLOCK_MONOTONIC
 * microseconds) and every DIR/*.cpuprofile (one per thread: node names them CPU.<date>.<time>.<pid>.<thread>.<n>), cuts
 * each profile's samples at the marks, and prints per phase and thread: the sampled time, how much of it was idle,
 * garbage collection or V8 itself, and the functions with the most self and inclusive (on the stack) time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }
interface Mark { size: number; phase: string; us: number }

const args = process.argv.slice(2);
const dir = args[0];
if (!dir) throw new Error('usage: profile-phases.ts DIR [--top N] [--phase NAME]');
const top = Number(args[args.indexOf('--top') + 1] ?? 12) || 12;
const onlyPhase = args.includes('--phase') ? args[args.indexOf('--phase') + 1] : undefined;

const marks = JSON.parse(readFileSync(join(dir, 'phases.json'), 'utf8')) as Mark[];
const windows = marks.slice(0, -1).map((m, i) => ({ name: `${m.size}: ${m.phase} → ${marks[i + 1]!.phase}`, from: m.us, to: marks[i + 1]!.us }))
  .filter((w) => w.to > w.from && (!onlyPhase || w.name.includes(onlyPhase)));

const label = (f: CallFrame): string => {
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  const file = basename(f.url.replace(/^file:\/\//, ''));
  return `${name} ${file}:${f.lineNumber + 1}`;
};

for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  // Sample i lasts until sample i + 1.
  const times: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const thread = file.split('.').slice(-3, -2)[0];
  console.log(`\n##### ${file} (thread ${thread}; ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s profiled)`);
  for (const w of windows) {
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    let sampled = 0;
    for (let i = 0; i < profile.samples.length - 1; i++) {
      if (times[i]! < w.from || times[i]! >= w.to) continue;
      const us = times[i + 1]! - times[i]!;
      sampled += us;
      let id: number | undefined = profile.samples[i]!;
      const leaf = label(byId.get(id)!.callFrame);
      self.set(leaf, (self.get(leaf) ?? 0) + us);
      const seen = new Set<string>();
      for (; id !== undefined; id = parent.get(id)) {
        const name = label(byId.get(id)!.callFrame);
        if (seen.has(name) || name === '(root)') continue;
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      }
    }
    if (sampled === 0) continue;
    const ms = (us: number) => (us / 1000).toFixed(1);
    const idle = self.get('(idle)') ?? 0;
    console.log(`\n=== ${w.name}: window ${ms(w.to - w.from)} ms, sampled ${ms(sampled)} ms, busy ${ms(sampled - idle)} ms ` +
      `(GC ${ms(self.get('(garbage collector)') ?? 0)}, program ${ms(self.get('(program)') ?? 0)})`);
    const rank = (m: Map<string, number>) => [...m].filter(([n]) => !['(idle)', '(program)', '(garbage collector)'].includes(n))
      .sort((a, b) => b[1] - a[1]).slice(0, top);
    console.log('  self:');
    for (const [name, us] of rank(self)) console.log(`    ${ms(us).padStart(8)} ms  ${(100 * us / (sampled - idle)).toFixed(1).padStart(5)}%  ${name}`);
    console.log('  inclusive:');
    for (const [name, us] of rank(inclusive)) console.log(`    ${ms(us).padStart(8)} ms  ${(100 * us / (sampled - idle)).toFixed(1).padStart(5)}%  ${name}`);
  }
}
