// Compiles src/ into dist/ with tsc (tsconfig.build.json). `--if-stale` (what `npm ci` and `npm start` run) does
// nothing when dist/ already matches the sources. Concurrent runs (tests start several servers at once) take a lock,
// so one compiles and the others wait for it and then find dist/ fresh.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIST, FINGERPRINT_FILE, ROOT, haveSources, isBuildFresh, sourceFingerprint } from './build-state.js';
import { TSC } from './tsc.js';

const LOCK = join(ROOT, '.build-lock');
const LOCK_WAIT_MS = 300_000;
const ifStale = process.argv.includes('--if-stale');

if (!haveSources()) {
  // `npm ci` in a layer that has only package.json and the lock file: the build happens once the sources are in.
  process.stderr.write('mnemo build: no sources here yet, nothing to compile\n');
  process.exit(0);
}
if (ifStale && isBuildFresh()) process.exit(0);

await withLock(() => {
  if (ifStale && isBuildFresh()) return; // another process built it while this one waited
  // Recorded before compiling: a source edited during the build leaves dist/ stale, as it is.
  const fingerprint = sourceFingerprint();
  const started = performance.now();
  process.stderr.write('mnemo build: compiling src/ into dist/ (tsc -p tsconfig.build.json)\n');
  rmSync(FINGERPRINT_FILE, { force: true });
  const result = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error(`mnemo build: tsc failed (exit ${result.status ?? result.signal})`);
  mkdirSync(DIST, { recursive: true });
  copyAssets();
  writeFileSync(FINGERPRINT_FILE, `${fingerprint}\n`);
  process.stderr.write(`mnemo build: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
});

/**
 * Copies the files under src/ that tsc does not compile (the dashboard's script and style sheet) to the same place
 * under dist/: the compiled modules read them beside themselves, as the sources do.
 */
function copyAssets() {
  const src = join(ROOT, 'src');
  for (const entry of readdirSync(src, { recursive: true })) {
    const file = String(entry);
    if (file.endsWith('.ts') || !statSync(join(src, file)).isFile()) continue;
    mkdirSync(dirname(join(DIST, file)), { recursive: true });
    cpSync(join(src, file), join(DIST, file));
  }
}

/** Runs `fn` holding a lock directory; a lock whose owner process is gone (killed mid-build) is taken over. */
async function withLock(fn) {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (ownerGone()) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`mnemo build: ${LOCK} held for over ${LOCK_WAIT_MS / 1000} s`, { cause: err });
      else await sleep(100);
    }
  }
  try {
    fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function ownerGone() {
  let pid;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // Created but no pid yet: normally a moment later there is one; an owner that died in between leaves it so.
    try {
      return Date.now() - statSync(LOCK).mtimeMs > 10_000;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return err.code === 'ESRCH';
  }
}
