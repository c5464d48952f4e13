// Compiles src/ into dist/ with tsc (tsconfig.build.json). `--if-stale` (what `npm ci` and `npm start` run) does
// nothing when dist/ already matches the sources. Concurrent runs (tests start several servers at once) take a lock,
// so one compiles and the others wait for it and then find dist/ fresh.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIST, FINGERPRINT_FILE, ROOT, haveSources, isBuildFresh, sourceFingerprint } from './build-state.js';
import { TSC } from './tsc.js';

const LOCK = join(ROOT, '.build-lock');
/** The files under dist/ the last build wrote, one a line: what removeOrphans may delete. */
const OUTPUTS_FILE = join(DIST, '.build-outputs');
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
  const result = compile('tsconfig.build.json');
  if (result.status !== 0) throw new Error(`mnemo build: tsc failed (exit ${result.status ?? result.signal})`);
  // package.json "exports": `mnemo/client` and `mnemo/integrations/*` with their declarations, under dist/package/.
  const exported = compile('tsconfig.package.json');
  if (exported.status !== 0) throw new Error(`mnemo build: tsc -p tsconfig.package.json failed (exit ${exported.status ?? exported.signal})`);
  mkdirSync(DIST, { recursive: true });
  const copied = copyAssets();
  removeOrphans([...emitted(result.stdout), ...emitted(exported.stdout), ...copied]);
  writeFileSync(FINGERPRINT_FILE, `${fingerprint}\n`);
  process.stderr.write(`mnemo build: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
});

/**
 * Copies the files under src/ that tsc does not compile (the dashboard's script and style sheet) to the same place
 * under dist/: the compiled modules read them beside themselves, as the sources do.
 */
function copyAssets() {
  const src = join(ROOT, 'src');
  const copied = [];
  for (const entry of readdirSync(src, { recursive: true })) {
    const file = String(entry);
    if (file.endsWith('.ts') || !statSync(join(src, file)).isFile()) continue;
    mkdirSync(dirname(join(DIST, file)), { recursive: true });
    cpSync(join(src, file), join(DIST, file));
    copied.push(file);
  }
  return copied;
}

/** The files under dist/ that tsc says it wrote (`--listEmittedFiles`: one `TSFILE: <path>` line each). */
function emitted(stdout) {
  return String(stdout).split('\n').filter((line) => line.startsWith('TSFILE: '))
    .map((line) => relative(DIST, line.slice('TSFILE: '.length).trim()));
}

/** Runs tsc on one project; its other output (the errors) goes to stderr, where the build's own messages go. */
function compile(project) {
  const result = spawnSync(process.execPath, [TSC, '-p', project, '--listEmittedFiles'], { cwd: ROOT, stdio: ['ignore', 'pipe', 2] });
  const said = String(result.stdout).split('\n').filter((line) => line.trim() && !line.startsWith('TSFILE: '));
  if (said.length > 0) process.stderr.write(`${said.join('\n')}\n`);
  return result;
}

/**
 * Deletes what an earlier build wrote and this one did not (the output of a source since deleted or renamed: tsc never
 * deletes), so that neither `npm start` nor the packed tarball (`npm pack` builds first) carries a module nothing
 * compiles any more. Only files a build wrote are candidates, listed beside them; nothing a process running from
 * dist/ meanwhile imports is among them.
 */
function removeOrphans(written) {
  let previous = [];
  try {
    previous = readFileSync(OUTPUTS_FILE, 'utf8').split('\n').filter(Boolean);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  const kept = new Set(written);
  for (const file of previous) if (!kept.has(file)) rmSync(join(DIST, file), { force: true });
  writeFileSync(OUTPUTS_FILE, `${[...kept].join('\n')}\n`);
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
