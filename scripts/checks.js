// `npm test`'s static checks, `npm run typecheck` (tsc) and `npm run lint` (ESLint), run at the same time: each is
// one process on one core, so on the 2-core machine one after the other took their sum (docs/testing.md).
// Each one's output is printed when it ends, in one piece; the exit code is non-zero when either failed.
// With --low-priority (scripts/test.js, beside vitest) both run at the lowest CPU priority: they take the time the
// tests leave idle rather than slow them.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ROOT } from './build-state.js';

const CHECKS = ['typecheck', 'lint'];
const LOWEST_PRIORITY = 19;

// Set on this process before it starts the checks: they inherit it, and so do the processes they start.
if (process.argv.includes('--low-priority')) setPriority(LOWEST_PRIORITY);

const run = (name) => new Promise((resolve) => {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', name], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => { output += c; });
  child.stderr.on('data', (c) => { output += c; });
  child.on('error', (err) => { output += `${err.stack ?? err}\n`; });
  child.on('close', (code, signal) => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const ok = code === 0;
    process.stdout.write(`> ${name}: ${ok ? 'ok' : `failed (${code ?? signal})`} in ${seconds} s\n${output}`);
    resolve(ok);
  });
});

const results = await Promise.all(CHECKS.map(run));
process.exitCode = results.every(Boolean) ? 0 : 1;
