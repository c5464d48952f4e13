import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { runMnemoInProcess } from '../support/cli.ts';
import { runMnemo } from '../support/spawn-cli.ts';
import { createTestApp, g1, json } from '../support/test-app.ts';

/**
 * `mnemo export` and `mnemo import` between real SQLite data directories and PostgreSQL (PGlite with pgvector served on
 * loopback through pglite-socket): every field survives a round trip, vectors are reused for the same model and
 * recomputed for another, and a bad line imports nothing (or, with --skip-bad, only itself is left out). One export
 * and one import are spawned as an operator runs them (bin/mnemo.js); the other runs go through the same entry in
 * process (runCli, with the process's exit code), which spares a tsx start-up per run.
 */
const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-export-')); dirs.push(d); return d; };
let pglite: PGlite;
let database: FileDatabase | undefined;
let pg: SharedPglite;
beforeAll(async () => { database = await fileDatabase(); pglite = database.pglite; pg = await servePglite(pglite); }, 120_000);
afterAll(async () => {
  await pg?.stop();
  await database?.release();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const hashing = (dir: string, dims = 256) => ({ MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_EMBEDDINGS_DIMENSIONS: String(dims) });
type Line = Record<string, unknown> & { vectors?: { model: string; dims: number; f32: string }[] };
const records = (text: string): Line[] => text.trimEnd().split('\n').slice(1).map((l) => JSON.parse(l) as Line);

async function exported(env: Record<string, string>, ...args: string[]): Promise<string> {
  const run = await runMnemoInProcess(env, 'export', ...args);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}
async function imported(env: Record<string, string>, file: string, ...args: string[]) {
  const run = await runMnemoInProcess(env, 'import', file, ...args);
  return run;
}

describe('mnemo export / import', () => {
  let source: string;
  let file: string;
  let original: string;

  beforeAll(async () => {
    // A store filled through the surfaces: two tenants, a second workspace, a topic, tags, metadata, reads, an edit,
    // and a second model's vectors beside the first (a reindex to 128 dimensions).
    source = tempDir();
    const app = await createTestApp({ env: { MNEMO_DATA_DIR: source } });
    try {
      const key = await app.key();
      const other = await app.key({ tenant: 'globex' });
      const topic = json(await app.app.inject({ method: 'POST', url: '/api/v1/topics', headers: { 'x-api-key': key }, payload: { name: 'Ops', description: 'operations' } })).data.id as string;
      const made = json(await g1(app.app, key).create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays', tags: ['ops', 'release'], metadata: { team: 'infra', n: 3, nested: { on: true } }, topic_id: topic, memory_type: 'workflow' })).data.id as string;
      await g1(app.app, key).get(made);
      await g1(app.app, key).update(made, { tags: ['ops'] });
      await g1(app.app, key, { 'x-workspace-id': 'home' }).create({ title: 'Garden', content: 'Water the tomatoes every evening' });
      await g1(app.app, other).create({ title: 'Lunch', content: 'Pasta at noon', metadata: { unicode: 'é 漢字 \u2028' } });
    } finally {
      await app.close();
    }
    const reindexed = await runMnemoInProcess(hashing(source, 128), 'reindex');
    expect(reindexed.code, reindexed.stderr).toBe(0);
    // The spawned export: the file every test below reads.
    const spawned = await runMnemo(hashing(source), 'export');
    expect(spawned.code, spawned.stderr).toBe(0);
    original = spawned.stdout;
    file = join(tempDir(), 'backup.jsonl');
    writeFileSync(file, original);
  }, 120_000);

  it('writes a header, the topics, then every memory with all its fields and both models\' vectors', () => {
    const lines = original.trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ mnemo_export: 1, filter: {} });
    const rs = records(original);
    expect(rs.map((r) => r.kind)).toEqual(['topic', 'memory', 'memory', 'memory', 'version']);
    expect(rs[1]).toMatchObject({
      kind: 'memory', tenant: 'acme', mode: 'live', workspace: 'default', title: 'Deploys', tags: ['ops'], memory_type: 'workflow',
      metadata: { team: 'infra', n: 3, nested: { on: true } }, topic_id: rs[0]!.id, access_count: 1, client_id: null,
    });
    expect(rs[1]!.last_accessed).toEqual(expect.any(String));
    expect(rs[1]!.vectors!.map((v) => [v.model, v.dims])).toEqual([['hashing:v1-128', 128], ['hashing:v1-256', 256]]);
    expect(Buffer.from(rs[1]!.vectors![1]!.f32, 'base64').length).toBe(256 * 4);
    expect(rs[1]).toMatchObject({ version: 2, valid_until: null, superseded_by: null, valid_from: rs[1]!.created_at });
    // The edit kept the state it replaced: the history travels too (round-tripped below with every other line).
    expect(rs[4]).toMatchObject({ kind: 'version', memory_id: rs[1]!.id, version: 1, tags: ['ops', 'release'], title: 'Deploys', tenant: 'acme' });
  });

  it('round-trips every field into SQLite and into PostgreSQL with the same model, reusing the vectors', async () => {
    const targets = [hashing(tempDir()), { ...hashing(tempDir()), MNEMO_DATABASE_URL: pg.url, MNEMO_DATABASE_POOL_SIZE: '2' }];
    for (const [i, env] of targets.entries()) {
      // The spawned import: into SQLite, as an operator runs it.
      const run = i === 0 ? await runMnemo(env, 'import', file) : await imported(env, file);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('imported: 3 memories (0 embedded with hashing:v1-256, the rest with their own vectors), 1 topics; 0 already stored; 0 bad lines skipped\n');
      expect(run.stderr).toMatch(/mnemo: import 3\/3 memories/);
      expect(records(await exported(env))).toEqual(records(original));
      // Again: nothing new, each memory reported as already stored.
      const again = await imported(env, file);
      expect(again.stdout).toContain('imported: 0 memories');
      expect(again.stdout).toContain('3 already stored');
    }
  }, 120_000);

  it('embeds again with another model, keeping the file\'s vectors; the imported store is searchable', async () => {
    const dir = tempDir();
    const run = await imported(hashing(dir, 64), file);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('imported: 3 memories (3 embedded with hashing:v1-64');
    const back = records(await exported(hashing(dir, 64)));
    const strip = (rs: Line[]) => rs.map(({ vectors: _v, ...rest }) => rest);
    expect(strip(back)).toEqual(strip(records(original)));
    expect(back[1]!.vectors!.map((v) => v.model)).toEqual(['hashing:v1-128', 'hashing:v1-256', 'hashing:v1-64']);

    const app = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    try {
      const res = await g1(app.app, await app.key()).search({ query: 'blue/green deploy on Friday', threshold: 0.6 });
      expect((json(res).data.results as { title: string }[])[0]?.title).toBe('Deploys');
    } finally {
      await app.close();
    }
  }, 120_000);

  it('exports one tenant or one workspace with --tenant / --workspace', async () => {
    expect(records(await exported(hashing(source), '--tenant', 'globex')).map((r) => r.title)).toEqual(['Lunch']);
    expect(records(await exported(hashing(source), '--workspace', 'home')).map((r) => r.title)).toEqual(['Garden']);
  }, 60_000);

  it('stops at a bad line, naming it, with nothing imported; --skip-bad reports it and imports the rest', async () => {
    const lines = original.trimEnd().split('\n');
    const broken = join(tempDir(), 'broken.jsonl');
    writeFileSync(broken, [...lines.slice(0, 3), '{"kind":"memory","id":', lines[3], JSON.stringify({ ...JSON.parse(lines[4]!), mode: 'prod' })].join('\n'));
    const dir = tempDir();
    const refused = await imported(hashing(dir), broken);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${broken} line 4: not JSON; nothing was imported`);
    expect((await runMnemoInProcess(hashing(dir), 'reindex', '--status')).stdout).toContain('memories: 0');

    const skipped = await imported(hashing(dir), broken, '--skip-bad');
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain(`${broken} line 4 skipped: not JSON`);
    expect(skipped.stderr).toContain(`${broken} line 6 skipped: mode must be "live" or "test"`);
    expect(skipped.stdout).toContain('imported: 2 memories');
    expect(skipped.stdout).toContain('2 bad lines skipped');

    const notExport = join(tempDir(), 'other.jsonl');
    writeFileSync(notExport, '{"hello":1}\n');
    const wrong = await imported(hashing(tempDir()), notExport);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('line 1: the first line must be the header');
    expect(readFileSync(notExport, 'utf8')).toBe('{"hello":1}\n');
  }, 120_000);

  it('a bad line late in the file, after a new topic and whole batches, leaves no topic, workspace or memory (SQLite and PostgreSQL)', async () => {
    // Fresh ids in a tenant of its own (the PostgreSQL store is shared with the round trip above).
    // A memory keeps naming its topic under the topic's fresh id (the old id is acme's topic in the shared PostgreSQL
    // store: import refuses a memory tied to another tenant's topic).
    const beef = (id: unknown) => `${String(id).slice(0, -4)}beef`;
    const fresh = (l: Line): Line => ({ ...l, tenant: 'late-bad', id: beef(l.id), ...(l.kind === 'memory' ? { client_id: null, topic_id: l.topic_id === null ? null : beef(l.topic_id) } : {}) });
    const lines = original.trimEnd().split('\n');
    const [header, ...rest] = lines;
    const body = rest.map((l) => JSON.stringify(fresh(JSON.parse(l) as Line)));
    const late = join(tempDir(), 'late.jsonl');
    writeFileSync(late, [header, ...body, '{"kind":"memory","tenant":'].join('\n'));
    const badLine = body.length + 2;
    for (const env of [hashing(tempDir()), { ...hashing(tempDir()), MNEMO_DATABASE_URL: pg.url, MNEMO_DATABASE_POOL_SIZE: '2' }]) {
      const run = await imported(env, late, '--batch-size', '1');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${late} line ${badLine}: not JSON; nothing was imported`);
      // Nothing of that tenant: the export of it is the header alone (no topic, no memory, so no workspace either).
      expect(records(await exported(env, '--tenant', 'late-bad'))).toEqual([]);
    }
  }, 120_000);
});
