import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/app/cli.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { REINDEX_STALE_AFTER_MS } from '../../src/core/embeddings/reindex-record.ts';
import { mnemo } from '../support/cli.ts';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { finished, startMnemo } from '../support/spawn-cli.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';

/**
 * `/health`'s `embeddings.reindex_run`: the store's record of its last `mnemo reindex`, written by the run as it goes
 * and read by a server on the old model, on SQLite and on PostgreSQL (PGlite with pgvector served on loopback, as
 * separate nodes would share it). Runs stop at --limit, die (SIGKILL: no word from the process, only its heartbeat
 * ageing), and complete.
 */
const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-reindex-health-')); dirs.push(d); return d; };
let pglite: PGlite;
let database: FileDatabase | undefined;
let pg: SharedPglite;
let provider: EmbeddingsServer;
beforeAll(async () => {
  database = await fileDatabase();
  pglite = database.pglite;
  pg = await servePglite(pglite);
  provider = await startEmbeddingsServer(32);
}, 120_000);
afterAll(async () => {
  await provider?.close();
  await pg?.stop();
  await database?.release();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NEW = 'hashing:v1-128';
const TEXTS = [
  ['Deploys', 'We deploy with blue/green on Fridays'], ['Lunch', 'Pasta at noon on Tuesdays'], ['Travel', 'Train to Lyon in May'],
  ['Dentist', 'Check-up booked for March'], ['Garden', 'Water the tomatoes every evening'], ['Code', 'Use pnpm in the monorepo'],
  ['Family', 'Call grandma on Sundays'], ['Car', 'Winter tyres in November'], ['Books', 'Reading Dune again'],
];

type Run = Record<string, unknown>;
const reindexRun = async (app: TestApp): Promise<Run | null> => {
  const res = await app.app.inject({ method: 'GET', url: '/health' });
  expect(res.statusCode).toBe(200);
  return json(res).embeddings.reindex_run as Run | null;
};
const isoTime = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

const stores: { name: string; env: (dir: string) => Record<string, string> }[] = [
  { name: 'SQLite data directory', env: (dir) => ({ MNEMO_DATA_DIR: dir }) },
  // One database for the file (a schema of the worker's PGlite): this case runs once, so its store starts empty.
  { name: 'PostgreSQL', env: (dir) => ({ MNEMO_DATA_DIR: dir, MNEMO_DATABASE_URL: pg.url, MNEMO_DATABASE_POOL_SIZE: '2' }) },
];

describe.each(stores)('/health shows the last reindex run ($name)', (store) => {
  it('none, then stopped at --limit, then running and, once its heartbeat is stale, stopped; then complete', async () => {
    const dir = tempDir();
    const base = store.env(dir);
    const newModel = { ...base, MNEMO_EMBEDDINGS: 'hashing', MNEMO_EMBEDDINGS_DIMENSIONS: '128' };
    // The server still runs on the old model (hashing, 256 dimensions); its clock is told the time by the test.
    const clock = new ManualClock(Date.now());
    const app = await createTestApp({ env: base, overrides: { clock } });
    try {
      const key = await app.key();
      for (const [title, content] of TEXTS) expect((await g1(app.app, key).create({ title, content })).statusCode).toBe(201);
      expect(await reindexRun(app)).toBeNull();
      expect((await mnemo(newModel, 'reindex', '--status')).stdout).toContain('last run: none recorded');

      // Stopped by --limit: the record says so, with the counts of the run's end.
      const started = Date.now();
      const limited = await mnemo(newModel, 'reindex', '--limit', '4', '--batch-size', '2', '--no-progress');
      expect(limited.error).toBeInstanceOf(CliError);
      expect(limited.stdout).toBe(`reindex limited: 4 vectors written; ${NEW}: 4/9 memories\n`);
      clock.set(Date.now());
      const stopped = await reindexRun(app);
      expect(stopped).toEqual({
        state: 'stopped', stop_reason: 'limit', model: NEW, dimensions: 128, filtered: false, done: 4, total: 9, written: 4,
        started_at: isoTime, updated_at: isoTime, finished_at: isoTime,
      });
      expect(Date.parse(stopped!.started_at as string)).toBeGreaterThanOrEqual(started - 5);
      expect(stopped!.finished_at).toBe(stopped!.updated_at);
      const status = await mnemo(newModel, 'reindex', '--status');
      expect(status.stdout).toContain(`last run: stopped (limit), ${NEW}: 4/9 memories, 4 vectors written; started ${stopped!.started_at as string}`);

      // A run of another model (an OpenAI-compatible provider, slow) is killed without a word after its first batch.
      provider.setDelay(300);
      const slow = { ...base, MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_URL: provider.url, MNEMO_EMBEDDINGS_MODEL: 'test-model', MNEMO_EMBEDDINGS_DIMENSIONS: '32' };
      const child = startMnemo(slow, ['reindex', '--batch-size', '1']);
      let killed = false;
      const run = await finished(child, (text) => {
        if (!killed && / 1\/9 memories/.test(text)) { killed = true; child.kill('SIGKILL'); }
      });
      provider.setDelay(0);
      expect(killed, run.stderr).toBe(true);
      expect(run.signal).toBe('SIGKILL');
      clock.set(Date.now());
      const dead = await reindexRun(app);
      // Its last write is recent: it still reads as running (a reader cannot tell yet), on the new run's model.
      expect(dead).toMatchObject({ state: 'running', stop_reason: null, model: 'openai:test-model@32', dimensions: 32, total: 9, finished_at: null });
      expect(dead!.done).toBeGreaterThanOrEqual(0);
      expect(dead!.done).toBeLessThanOrEqual(1);
      expect(dead!.started_at).not.toBe(stopped!.started_at);
      // No heartbeat for longer than the staleness: stopped, and said why.
      clock.set(Date.parse(dead!.updated_at as string) + REINDEX_STALE_AFTER_MS + 1);
      expect(await reindexRun(app)).toEqual({ ...dead, state: 'stopped', stop_reason: 'no_heartbeat' });
      // The CLI reads with the real clock, on which the heartbeat is still fresh.
      expect((await mnemo(newModel, 'reindex', '--status')).stdout).toContain('last run: running, openai:test-model@32: ');

      // The new model's run again: it resumes (5 left) and completes.
      const rest = await mnemo(newModel, 'reindex', '--batch-size', '3', '--no-progress');
      expect(rest.error, rest.stderr).toBeUndefined();
      clock.set(Date.now());
      expect(await reindexRun(app)).toEqual({
        state: 'complete', stop_reason: null, model: NEW, dimensions: 128, filtered: false, done: 9, total: 9, written: 5,
        started_at: isoTime, updated_at: isoTime, finished_at: isoTime,
      });
      // A filtered run says that it was filtered, not by what (health needs no key; tenants are not public).
      expect((await mnemo(newModel, 'reindex', '--tenant', 'acme', '--no-progress')).error).toBeUndefined();
      const filtered = await reindexRun(app);
      expect(filtered).toMatchObject({ state: 'complete', filtered: true, done: 9, total: 9, written: 0 });
      expect(JSON.stringify(filtered)).not.toContain('acme');
    } finally {
      await app.close();
    }
  }, 120_000);
});
