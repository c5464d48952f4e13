// `npm test`'s static checks, `npm run typecheck` (tsc) and `npm run lint` (ESLint), run at the same time: each is
// one process on one core, so on the 2-core machine one after the other took their sum (docs/testing.md).
// Each one's output is printed when it ends, in one piece; the exit code is non-zero when either failed.
// With --low-priority (scripts/test.js, beside vitest) both run at the lowest CPU priority: they take the time the
// tests leave idle rather than slow them.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './build-state.js';

const LOWEST_PRIORITY = 19;
const lowPriority = process.argv.includes('--low-priority');
/** What the checks keep between runs (node_modules/: not in git, and gone with a fresh install). */
const CACHE = join(ROOT, 'node_modules', '.cache', 'mnemo-checks');
/**
 * Each check's npm script, and what it is given (docs/testing.md, "Duration"). Both keep what they found between runs
 * and check again only what changed since: tsc's build info and ESLint's cache (keyed on each file's content and the
 * configuration), so a second run costs a fraction of the first. Beside vitest the checks take CPU the tests would
 * otherwise use, so less CPU matters more there than less wall time: TypeScript 7's tsc on one thread type-checks this
 * project with about a quarter less CPU than on its default several.
 */
const CHECKS = [
  {
    name: 'typecheck',
    args: ['--incremental', '--tsBuildInfoFile', join(CACHE, 'typecheck.tsbuildinfo'), ...(lowPriority ? ['--singleThreaded'] : [])],
  },
  { name: 'lint', args: ['--cache', '--cache-strategy', 'content', '--cache-location', join(CACHE, 'eslint/')] },
];

// Set on this process before it starts the checks: they inherit it, and so do the processes they start.
if (lowPriority) setPriority(LOWEST_PRIORITY);

const run = ({ name, args }) => new Promise((resolve) => {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', name, '--', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
