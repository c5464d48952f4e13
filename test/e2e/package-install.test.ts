import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryRoot as root, whenListening } from '../support/npm-start.ts';
import { cleanEnv } from '../support/spawn-cli.ts';
import { longTests } from '../support/test-depth.ts';

/**
 * The packed tarball, installed into an empty directory as an operator installs it (docs/cli.md, "Installing the
 * package"), serves as `npm start` does, with its data in the per-user directory. Mostly npm's work, it costs about
 * 40 s of CPU (minutes of wall time on a busy 2-core machine), so it runs in `npm run test:package` and
 * `npm run test:long`, not in `npm test` (docs/testing.md).
 *
 * Offline (CI has no network), npm installs from its cache, which `npm ci` filled with tarballs but no registry
 * metadata: npm cannot pick versions for the package's ranges there, so the empty directory starts with the
 * checkout's lock file (every entry extraneous until the install needs it), which `npm install <tarball>` resolves
 * against, and with the checkout's `overrides`, which that lock was resolved under (and which a Node 20 operator
 * copies too, docs/cli.md). better-sqlite3's install script finds its binary in a local prebuild made from the
 * checkout's own build (prebuild-install's documented `local-prebuilds`) instead of compiling it again for minutes.
 */
const run = promisify(execFile);
const enabled = process.env.MNEMO_TEST_PACKAGE === '1' || longTests();
const repoPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; overrides: object };

describe.runIf(enabled)('the packed tarball, installed in an empty directory', () => {
  // Made in beforeAll: a skipped run (`npm test`) leaves nothing behind.
  let temp: string;
  let app: string;
  let home: string;
  /** The environment of the installed `mnemo`: no MNEMO_ setting, a fresh HOME, no XDG_DATA_HOME. */
  const operatorEnv = (env: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const { XDG_DATA_HOME: _ignored, ...rest } = cleanEnv({ HOME: home, ...env });
    return rest;
  };

  beforeAll(async () => {
    temp = mkdtempSync(join(tmpdir(), 'mnemo-package-'));
    app = join(temp, 'app');
    home = join(temp, 'home');
    mkdirSync(app);
    mkdirSync(home);
    // `prepack` compiles src/ into dist/ first when dist/ is stale.
    await run('npm', ['pack', '--pack-destination', temp], { cwd: root });
    const tarball = readdirSync(temp).find((f) => f.endsWith('.tgz'))!;
    seedLock(app);
    const prebuilds = await localBetterSqlitePrebuild(temp);
    await run('npm', ['install', join(temp, tarball), '--offline', '--no-audit', '--no-fund'], {
      cwd: app, env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: prebuilds },
    });
    // tsx is a dependency for a checkout's fallback to src/: gone, it proves the package never needs it.
    for (const dir of [join(app, 'node_modules', 'tsx'), join(app, 'node_modules', 'mnemo', 'node_modules', 'tsx')]) {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('holds the compiled code, the CLI and the bundled model, and no sources', () => {
    const installed = join(app, 'node_modules', 'mnemo');
    const top = readdirSync(installed);
    expect(top).toEqual(expect.arrayContaining(['bin', 'dist', 'package.json', 'README.md']));
    for (const absent of ['src', 'test', 'bench', 'fuzz', 'tsconfig.json', 'package-lock.json']) expect(top).not.toContain(absent);
    for (const file of ['dist/app/cli-main.js', 'dist/dashboard/assets/dashboard.css', 'dist/dashboard/assets/dashboard.js', 'scripts/build-state.js']) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    const model = join(app, 'node_modules', '@energetic-ai', 'model-embeddings-en', 'dist');
    expect(readdirSync(model)).toEqual(expect.arrayContaining(['model.json', 'group1-shard1of7', 'group1-shard7of7']));
  });

  it('answers `npx mnemo --version` with the package version', async () => {
    const { stdout } = await run('npx', ['mnemo', '--version'], { cwd: app, env: operatorEnv() });
    expect(stdout.trim()).toBe(repoPackage.version);
  });

  it('serves with `npx mnemo start` and `mnemo start`, data in ~/.local/share/mnemo, which `mnemo keys create` uses too', async () => {
    const env = operatorEnv({ MNEMO_EMBEDDINGS: 'hashing', HOST: '127.0.0.1', PORT: '0', MNEMO_LOG_LEVEL: 'warn' });
    const database = join(home, '.local', 'share', 'mnemo', 'mnemo.db');
    // A process group of its own: npx runs the command in a shell that a SIGTERM to npx alone would leave behind.
    const viaNpx = await whenListening(spawn('npx', ['mnemo', 'start'], { cwd: app, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }), 120_000);
    let key: string;
    try {
      expect(viaNpx.output()).toContain(`mnemo: database ${database}`);
      const health = await fetch(`${viaNpx.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', embeddings: { model: 'hashing:v1-512', dimensions: 512 } });
      expect(readdirSync(join(home, '.local', 'share', 'mnemo'))).toEqual(expect.arrayContaining(['mnemo.db', 'master.key']));
      expect(existsSync(join(app, 'data')), 'nothing in the working directory').toBe(false);

      const created = await run('npx', ['mnemo', 'keys', 'create', '--json'], { cwd: app, env });
      expect(created.stderr).toContain(`mnemo: database ${database}`);
      key = (JSON.parse(created.stdout) as { key: string }).key;
      expect((await fetch(`${viaNpx.url}/api/v1/memories`, { headers: { 'x-api-key': key } })).status, 'the server knows the key').toBe(200);
    } finally {
      process.kill(-viaNpx.child.pid!, 'SIGTERM');
    }
    // The server holds the output pipe until it exits: `close` is its end, not only npx's.
    await new Promise((resolve) => viaNpx.child.once('close', resolve));
    await expect(fetch(`${viaNpx.url}/health`)).rejects.toThrow();

    // As a global install runs it: the bin on the PATH, which receives the signal itself.
    const path = `${join(app, 'node_modules', '.bin')}${delimiter}${env.PATH ?? ''}`;
    const onPath = await whenListening(spawn('mnemo', ['start'], { cwd: temp, env: { ...env, PATH: path }, stdio: ['ignore', 'pipe', 'pipe'] }), 120_000);
    try {
      expect(onPath.output()).toContain(`mnemo: database ${database}`);
      expect((await fetch(`${onPath.url}/api/v1/memories`, { headers: { 'x-api-key': key } })).status, 'the same data after a restart').toBe(200);
    } finally {
      onPath.child.kill('SIGTERM');
    }
    expect(await onPath.exited).toBe(0);
  }, 240_000);
});

/**
 * The lock `npm install <tarball>` resolves the package's dependencies against: the checkout's, under an empty root
 * that has the checkout's overrides. The registry URLs npm leaves out of the checkout's lock are put back (npm's own
 * layout for them), because without one npm asks the registry where a tarball is even when its cache holds it.
 */
function seedLock(dir: string): void {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    name: string; version?: string; packages: Record<string, { name?: string; version?: string; resolved?: string; link?: boolean }>;
  };
  const name = 'mnemo-package-install-test';
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, overrides: repoPackage.overrides }));
  lock.name = name;
  delete lock.version;
  lock.packages[''] = { name };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link || entry.resolved || !entry.version) continue;
    const pkg = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    entry.resolved = `https://registry.npmjs.org/${pkg}/-/${pkg.split('/').pop()}-${entry.version}.tgz`;
  }
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock));
}

/** A directory holding the checkout's compiled better-sqlite3 as prebuild-install names a downloaded prebuild. */
async function localBetterSqlitePrebuild(dir: string): Promise<string> {
  const moduleDir = join(root, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(moduleDir, 'package.json'), 'utf8')) as { version: string };
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, file), '-C', moduleDir, 'build/Release/better_sqlite3.node']);
  return prebuilds;
}
