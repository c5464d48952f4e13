// `npm test`: vitest and the static checks (scripts/checks.js: typecheck and lint) at the same time. vitest leaves
// part of the 2-core machine idle (files waiting on spawned servers, timers, sockets); the checks, at the lowest CPU
// priority, take that idle time instead of running first on their own (docs/testing.md, "Duration").
// vitest's output comes as it runs; the checks' output is printed after it, in one piece. The exit code is non-zero
// when either failed. Arguments go to vitest (`npm test -- test/g1`).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from './build-state.js';

const VITEST = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

const finished = (child) => new Promise((resolve) => {
  child.on('error', (err) => resolve(`${err.message}`));
  child.on('close', (code, signal) => resolve(code === 0 ? 0 : (code ?? signal)));
});

/**
 * Puts every thread of `rootPid` and of the processes under it back to normal priority (setPriority sets one thread's
 * on Linux). Once vitest has ended, the checks have nothing left to yield to but other people's work on a shared
 * machine, behind which the lowest priority starves them. Best effort: Linux only (/proc), and lowering a niceness
 * needs root or CAP_SYS_NICE; without them the checks finish at the lowest priority.
 */
function backToNormalPriority(rootPid) {
  const parentOf = new Map();
  try {
    for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch { /* ended meanwhile */ }
    }
  } catch {
    return;
  }
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid);
  for (const pid of tree) {
    let threads;
    try { threads = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of threads) {
      try { setPriority(Number(tid), 0); } catch { /* not allowed, or ended */ }
    }
  }
}

const checks = spawn(process.execPath, [join(ROOT, 'scripts', 'checks.js'), '--low-priority'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
let checksOutput = '';
checks.stdout.on('data', (c) => { checksOutput += c; });
checks.stderr.on('data', (c) => { checksOutput += c; });
let checksEnded = false;
const checksDone = finished(checks).then((result) => { checksEnded = true; return result; });

const vitestResult = await finished(spawn(process.execPath, [VITEST, 'run', ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' }));
if (!checksEnded) {
  process.stdout.write('\nvitest has finished; waiting for the typecheck and lint...\n');
  backToNormalPriority(checks.pid);
}
const checksResult = await checksDone;
process.stdout.write(`\n${checksOutput}`);
if (vitestResult !== 0) process.stdout.write(`> vitest: failed (${vitestResult})\n`);
process.exitCode = vitestResult === 0 && checksResult === 0 ? 0 : 1;
