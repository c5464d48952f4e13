import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, it } from 'vitest';
import { npmStart, repositoryRoot as root, startCompiledServer } from '../support/npm-start.ts';

const run = promisify(execFile);

/**
 * `mnemo keys create` from the package's bin, as `npx mnemo` runs it (npx only finds that file, for about 2 s of CPU
 * more; installing and running the package through npx is `npm run test:package`'s).
 */
async function createKey(dataDir: string, ...args: string[]) {
  const { stdout } = await run(process.execPath, ['bin/mnemo.js', 'keys', 'create', ...args, '--json'], { cwd: root, env: { ...process.env, MNEMO_DATA_DIR: dataDir } });
  return JSON.parse(stdout) as { id: string; key: string; tenant: string; user: string; tier: string; mode: string; scopes: string[] };
}

const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-e2e-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

// Concurrent: the tests share nothing, and each mostly waits on the processes it starts (the first for tens of seconds).
describe.concurrent('end to end: npm start, the CLI and HTTP on loopback', () => {
  it('serves G1 with the bundled local model, takes keys from the CLI while running, and stops on SIGTERM', async ({ expect }) => {
    // Made by the server: only its user may enter it and read its files.
    const dataDir = join(tempDir(), 'data');
    const server = await npmStart({ MNEMO_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', MNEMO_LOG_LEVEL: 'warn' });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', embeddings: { model: 'local:use-lite-512', dimensions: 512 } });

    const created = await createKey(dataDir, '--tenant', 'e2e', '--user', 'ann', '--tier', 'pro');
    expect(created).toMatchObject({ tenant: 'e2e', user: 'ann', tier: 'pro', mode: 'live' });
    expect(created.key).toMatch(/^mnemo_live_/);
    expect(created.scopes).toContain('memories:write');
    const mode = (file: string) => (statSync(join(dataDir, file)).mode & 0o777).toString(8);
    expect(['.', 'mnemo.db', 'mnemo.db-wal', 'mnemo.db-shm', 'master.key'].map(mode)).toEqual(['700', '600', '600', '600', '600']);

    const headers = { 'x-api-key': created.key, 'content-type': 'application/json' };
    const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const cat = await post('/api/v1/memories', { title: 'Pets', content: 'The cat sat on the mat all afternoon' });
    expect(cat.status).toBe(201);
    const catId = ((await cat.json()) as { data: { id: string } }).data.id;
    await post('/api/v1/memories', { title: 'Finance', content: 'Quarterly revenue grew by ten percent' });

    const search = await post('/api/v1/memories/search', { query: 'a kitten resting on a rug', limit: 5 });
    const results = ((await search.json()) as { data: { results: { id: string; similarity_score: number }[] } }).data.results;
    expect(results[0]?.id).toBe(catId);
    expect(results.map((r) => r.id)).toHaveLength(1);

    const get = await fetch(`${server.url}/api/v1/memories/${catId.slice(0, 8)}`, { headers });
    expect(((await get.json()) as { data: { access_count: number } }).data.access_count).toBe(1);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();

    // The data survives a restart; a database others can read is logged once (at warn) and served. One model worker:
    // the restart is about the data and the warning, and each worker loads the model (about 2 s of CPU). The compiled
    // server that `npm start` ran just now, without npm around it again (its CLI costs about a second of CPU).
    const db = join(dataDir, 'mnemo.db');
    chmodSync(db, 0o644);
    const again = await startCompiledServer({ ...process.env, MNEMO_DATA_DIR: dataDir, PORT: '0', MNEMO_LOG_LEVEL: 'warn', MNEMO_EMBEDDINGS: 'local', MNEMO_EMBEDDING_WORKERS: '1' });
    const list = await fetch(`${again.url}/api/v1/memories`, { headers });
    expect(((await list.json()) as { pagination: { total: number } }).pagination.total).toBe(2);
    const exposed = (output: string) => output.split('\n').filter((l) => l.startsWith('{') && l.includes('other users'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exposed(server.output())).toEqual([]);
    expect(exposed(again.output())).toEqual([expect.objectContaining({
      level: 40, file: db, mode: '0644', msg: `${db} is readable by other users (mode 0644): run \`chmod 600 ${db}\``,
    })]);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);

  it('refuses to start on a bad configuration value, naming the variable', async ({ expect }) => {
    const child = spawn('npm', ['start'], { cwd: root, env: { ...process.env, PORT: 'eighty', MNEMO_DATA_DIR: tempDir() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(err).toContain('PORT');
    expect(err).toContain('eighty');
  }, 60_000);

  it('runs the mnemo binary: help, and exit code 1 with a message for a database that does not exist', async ({ expect }) => {
    const { stdout } = await run(process.execPath, ['bin/mnemo.js', 'keys', '--help'], { cwd: root });
    expect(stdout).toContain('Usage: mnemo keys');
    const missing = join(tempDir(), 'elsewhere');
    const failed = await run(process.execPath, ['bin/mnemo.js', 'keys', 'list'], { cwd: root, env: { ...process.env, MNEMO_DATA_DIR: missing } })
      .then(() => null, (err: { code: number; stderr: string }) => err);
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/^mnemo: no database at .*elsewhere/m);
  }, 60_000);
});
