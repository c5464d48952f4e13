import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { startEmbeddingsServer } from '../support/embeddings-server.ts';
import { runMnemoInProcess } from '../support/cli.ts';
import { finished, startMnemo } from '../support/spawn-cli.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';

/**
 * `mnemo reindex` on a real SQLite data directory that a server (on the old model) keeps serving: stopped by --limit
 * and by SIGTERM, resumed, searches answering from the old vectors meanwhile, then a server on the new model, and
 * --prune. The SIGTERM run is spawned as an operator runs it (bin/mnemo.js); the others go through the same entry in
 * process (runCli, with the process's exit code), which spares a tsx start-up per run.
 */
const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-reindex-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const OLD = 'hashing:v1-256';
const NEW = 'hashing:v1-128';
const TEXTS = [
  ['Deploys', 'We deploy with blue/green on Fridays'], ['Lunch', 'Pasta at noon on Tuesdays'], ['Travel', 'Train to Lyon in May'],
  ['Dentist', 'Check-up booked for March'], ['Garden', 'Water the tomatoes every evening'], ['Code', 'Use pnpm in the monorepo'],
  ['Family', 'Call grandma on Sundays'], ['Car', 'Winter tyres in November'], ['Books', 'Reading Dune again'],
];

async function fill(app: TestApp, key: string, workspace?: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [title, content] of TEXTS) {
    const res = await g1(app.app, key, workspace ? { 'x-workspace-id': workspace } : {}).create({ title, content });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(json(res).data.id as string);
  }
  return ids;
}
const searchIds = async (app: TestApp, key: string, query: string) => {
  const res = await g1(app.app, key).search({ query, threshold: 0.6 });
  expect(res.statusCode, res.body).toBe(200);
  return (json(res).data.results as { id: string }[]).map((d) => d.id);
};
// The coverage part of /health's embeddings; the run record beside it (reindex_run) is tested in reindex-health.test.ts.
const health = async (app: TestApp) => {
  const { reindex_run: _run, ...coverage } = json(await app.app.inject({ method: 'GET', url: '/health' })).embeddings as Record<string, unknown>;
  return coverage;
};

describe('mnemo reindex (SQLite data directory)', () => {
  it('stops at --limit, resumes, keeps the old server answering from its vectors, and serves the new model when complete', async () => {
    const dir = tempDir();
    const newEnv = { MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_EMBEDDINGS_DIMENSIONS: '128' };
    const old = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    try {
      const key = await old.key();
      const ids = [...await fill(old, key), ...await fill(old, key, 'side')];
      const before = await searchIds(old, key, 'blue/green deploy on Friday');
      expect(before[0]).toBe(ids[0]);
      expect(await health(old)).toEqual({ model: OLD, dimensions: 256, reindex: { state: 'complete', done: 18, total: 18 }, other_models: [] });

      const status = await runMnemoInProcess(newEnv, 'reindex', '--status');
      expect(status.code).toBe(1);
      expect(status.stdout).toContain(`configured model ${NEW}: 0/18 (reindex needed)`);
      expect(status.stdout).toContain(`other model ${OLD} (256 dimensions): 18 vectors`);

      const partial = await runMnemoInProcess(newEnv, 'reindex', '--limit', '8', '--batch-size', '4');
      expect(partial.code, partial.stderr).toBe(1);
      expect(partial.stdout).toBe(`reindex limited: 8 vectors written; ${NEW}: 8/18 memories\n`);
      expect(partial.stderr).toContain('stopped after --limit 8 vectors; run the command again to go on');
      expect(partial.stderr).toMatch(/mnemo: reindex 8\/18 memories \([\d.]+\/s, eta /);

      // The old server, mid-reindex: same answers, from its own vectors; /health shows the new model's progress.
      expect(await searchIds(old, key, 'blue/green deploy on Friday')).toEqual(before);
      // /health reuses its count for up to 100× the time the count took (at most 10 s, app/embeddings-health.ts): the
      // one taken before the reindex may still be served for a moment.
      await expect.poll(() => health(old), { timeout: 15_000, interval: 250 })
        .toMatchObject({ model: OLD, reindex: { state: 'complete', done: 18, total: 18 }, other_models: [{ model: NEW, dimensions: 128, vectors: 8 }] });
      // It keeps writing: a new memory, and an edit of one already reindexed (whose new-model vector is now stale).
      const added = json(await g1(old.app, key).create({ title: 'Bins', content: 'Recycling goes out on Thursday' })).data.id as string;
      expect((await g1(old.app, key).update(ids[0]!, { content: 'We deploy with blue/green on Mondays' })).statusCode).toBe(200);

      // 10 never done, the new memory, and the edited one (its new-model vector was dropped with the edit).
      const rest = await runMnemoInProcess(newEnv, 'reindex', '--batch-size', '4');
      expect(rest.code, rest.stderr).toBe(0);
      expect(rest.stdout).toBe(`reindex complete: 12 vectors written; ${NEW}: 19/19 memories\n`);
      expect((await runMnemoInProcess(newEnv, 'reindex', '--status')).code).toBe(0);
      expect(await searchIds(old, key, 'recycling on Thursday')).toContain(added);
    } finally {
      await old.close();
    }

    // The server restarted on the new model answers from the new vectors, the edit included.
    const next = await createTestApp({ env: { MNEMO_DATA_DIR: dir }, overrides: { embedder: createHashingEmbedder({ dimensions: 128 }) } });
    try {
      const key = await next.key();
      const hits = await searchIds(next, key, 'blue/green deploy on Mondays');
      expect(hits.length).toBeGreaterThan(0);
      expect(await health(next)).toEqual({ model: NEW, dimensions: 128, reindex: { state: 'complete', done: 19, total: 19 }, other_models: [{ model: OLD, dimensions: 256, vectors: 19 }] });
      const pruned = await runMnemoInProcess(newEnv, 'reindex', '--prune');
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(pruned.stdout).toContain('pruned: 19 vectors of other models deleted');
    } finally {
      await next.close();
    }
    const back = await runMnemoInProcess({ ...newEnv, MNEMO_EMBEDDINGS_DIMENSIONS: '256' }, 'reindex', '--status');
    expect(back.code).toBe(1);
    expect(back.stdout).toContain(`configured model ${OLD}: 0/19 (reindex needed)`);
  }, 120_000);

  it('a server on a model the store has no vectors of says so on /health, and ranks only its own vectors', async () => {
    const dir = tempDir();
    const old = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    const key = await old.key();
    await fill(old, key);
    await old.close();
    const next = await createTestApp({ env: { MNEMO_DATA_DIR: dir }, overrides: { embedder: createHashingEmbedder({ dimensions: 128 }) } });
    try {
      expect(await health(next)).toEqual({ model: NEW, dimensions: 128, reindex: { state: 'needed', done: 0, total: 9 }, other_models: [{ model: OLD, dimensions: 256, vectors: 9 }] });
      expect(await searchIds(next, await next.key(), 'blue/green deploy on Friday')).toEqual([]);
    } finally {
      await next.close();
    }
  }, 60_000);

  it('stops on SIGTERM after the batch under way, and a second run resumes where it stopped', async () => {
    const dir = tempDir();
    const app = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    await fill(app, await app.key());
    await app.close();
    const provider = await startEmbeddingsServer(32);
    try {
      provider.setDelay(400);
      const env = {
        MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_URL: provider.url, MNEMO_EMBEDDINGS_MODEL: 'test-model',
        MNEMO_EMBEDDINGS_DIMENSIONS: '32',
      };
      const child = startMnemo(env, ['reindex', '--batch-size', '1']);
      let signalled = false;
      const run = await finished(child, (text) => {
        // The first batch is written: stop it.
        if (!signalled && / 1\/9 memories/.test(text)) { signalled = true; child.kill('SIGTERM'); }
      });
      expect(signalled).toBe(true);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain('SIGTERM: stopping after the batch under way');
      const stopped = /reindex stopped: (\d+) vectors written; (\S+): (\d+)\/9 memories/.exec(run.stdout);
      expect(stopped, run.stdout).not.toBeNull();
      const written = Number(stopped![1]);
      expect(written).toBeGreaterThanOrEqual(1);
      expect(written).toBeLessThan(9);

      provider.setDelay(0);
      const rest = await runMnemoInProcess(env, 'reindex', '--batch-size', '3');
      expect(rest.code, rest.stderr).toBe(0);
      expect(rest.stdout).toContain(`reindex complete: ${9 - written} vectors written`);
      expect(rest.stdout).toContain('9/9 memories');
    } finally {
      await provider.close();
    }
  }, 120_000);
});
