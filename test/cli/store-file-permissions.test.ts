import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer } from '../../src/app/container.ts';
import { runCli } from '../../src/app/cli-run.ts';
import { startServer } from '../../src/app/start.ts';
import { runMnemoInProcess } from '../support/cli.ts';

/**
 * Store files only the service's user can read: the data directory is made 0700 and its files 0600 whatever the
 * umask (this test process's is 022), a store file others can write stops the store from opening with a message
 * naming the file, its mode and the chmod to run, and one others can read is reported once and opened. `npm start`
 * itself is checked in test/e2e/server.test.ts (modes, and the warning); here the CLI, the server's start and its
 * container, in process.
 */
const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-files-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const env = (dir: string) => ({ MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_SQLITE_SYNCHRONOUS: 'normal', HOST: '127.0.0.1', PORT: '0' });

/** A data directory (not yet existing) holding a store made by `mnemo keys create`. */
async function store(): Promise<{ dir: string; db: string }> {
  const dir = join(tempDir(), 'data');
  const run = await runMnemoInProcess(env(dir), 'keys', 'create', '--json');
  expect(run.code, run.stderr).toBe(0);
  return { dir, db: join(dir, 'mnemo.db') };
}

describe.skipIf(process.platform === 'win32')('store file permissions', () => {
  it('creates the data directory 0700, the database, its -wal and -shm and master.key 0600, under a umask of 022', async () => {
    const { dir, db } = await store();
    expect([mode(dir), mode(db)]).toEqual(['700', '600']);
    // Open, as a server holds it: the -wal and -shm exist, and master.key is made.
    const container = await createContainer(loadConfig(env(dir)));
    try {
      await container.apiKeys.create({ tenantId: 'acme', userId: 'ann', tier: 'free', mode: 'live' });
      expect([`${db}-wal`, `${db}-shm`, join(dir, 'master.key')].map(mode)).toEqual(['600', '600', '600']);
    } finally {
      await container.close();
    }
  });

  it('refuses a database, -wal or data directory others can write, naming it, its mode and the chmod', async () => {
    const { dir, db } = await store();
    for (const [path, bits, fix] of [[db, 0o666, 600], [dir, 0o777, 700], [dir, 0o770, 700]] as const) {
      chmodSync(path, bits);
      const run = await runMnemoInProcess(env(dir), 'keys', 'list');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`mnemo: ${path} is writable by other users (mode 0${bits.toString(8)}): run \`chmod ${fix} ${path}\`\n`);
      // What `npm start` runs: main() prints `mnemo: failed to start: <message>` and exits 1.
      await expect(startServer(loadConfig(env(dir)))).rejects.toThrow(`${path} is writable by other users`);
      chmodSync(path, fix === 600 ? 0o600 : 0o700);
    }
    // A -wal left by a crash is checked before SQLite opens it.
    const wal = `${db}-wal`;
    closeSync(openSync(wal, 'w', 0o600));
    chmodSync(wal, 0o622);
    expect((await runMnemoInProcess(env(dir), 'keys', 'list')).stderr).toContain(`mnemo: ${wal} is writable by other users (mode 0622)`);
  });

  it('warns once about a database others can read, and opens it', async () => {
    const { dir, db } = await store();
    chmodSync(db, 0o644);
    const run = await runMnemoInProcess(env(dir), 'keys', 'list', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveLength(1);
    expect(run.stderr.match(/warning/g)).toHaveLength(1);
    expect(run.stderr).toContain(`mnemo: warning: ${db} is readable by other users (mode 0644): run \`chmod 600 ${db}\`\n`);

    // The server's container opens the store before its logger exists: the warning is held until the logger attaches.
    const container = await createContainer(loadConfig(env(dir)));
    const warnings: { details: object; message: string }[] = [];
    container.warnings.attach({ warn: (details, message) => warnings.push({ details, message }) });
    await container.close();
    expect(warnings).toEqual([{ details: { file: db, mode: '0644', fix: `chmod 600 ${db}` }, message: `${db} is readable by other users (mode 0644): run \`chmod 600 ${db}\`` }]);
  });

  it('makes the file an export is redirected to private', async () => {
    const { dir } = await store();
    const file = join(tempDir(), 'backup.jsonl');
    const fd = openSync(file, 'w', 0o644);
    let stderr = '';
    try {
      const code = await runCli(['export', '--no-progress'], { env: env(dir), out: (s) => { writeSync(fd, s); }, err: (s) => { stderr += s; }, outFd: fd });
      expect(code, stderr).toBeUndefined();
    } finally {
      closeSync(fd);
    }
    expect(mode(file)).toBe('600');
    expect(stderr).toContain('mnemo: output file made private (mode 0644 -> 0600)');
    expect(readFileSync(file, 'utf8')).toMatch(/^\{"mnemo_export":1,/);
  });
});
