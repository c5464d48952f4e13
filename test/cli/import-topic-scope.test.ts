import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/app/cli.ts';
import { mnemo } from '../support/cli.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { createTestApp, g1, json } from '../support/test-app.ts';

/**
 * `mnemo import` and topic ids, which are unique in the whole store while a topic belongs to one tenant, mode and
 * workspace: a file whose topic id is already another scope's topic (or whose memory names such a topic), or whose
 * topic name its parent already holds under another id, is refused by the check before anything is written, naming
 * the line, on SQLite and on PostgreSQL (PGlite served on loopback). Before that check, the write pass stopped at the
 * topic's insert after writing the lines before it, and every rerun stopped there again.
 */
const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-import-topics-')); dirs.push(d); return d; };
let pglite: PGlite;
let database: FileDatabase | undefined;
let pg: SharedPglite;
let source: string;
let lines: Line[];
beforeAll(async () => {
  database = await fileDatabase();
  pglite = database.pglite;
  pg = await servePglite(pglite);
  // The source store: two topics of acme's default workspace, a memory in each.
  source = tempDir();
  const app = await createTestApp({ env: { MNEMO_DATA_DIR: source } });
  try {
    const key = await app.key();
    const topic = async (name: string) => json(await app.app.inject({ method: 'POST', url: '/api/v1/topics', headers: { 'x-api-key': key }, payload: { name } })).data.id as string;
    const ops = await topic('Ops');
    const home = await topic('Home');
    expect((await g1(app.app, key).create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays', topic_id: ops })).statusCode).toBe(201);
    expect((await g1(app.app, key).create({ title: 'Garden', content: 'Water the tomatoes every evening', topic_id: home })).statusCode).toBe(201);
  } finally {
    await app.close();
  }
  const run = await mnemo(hashing(source), 'export', '--no-progress');
  expect(run.error, run.stderr).toBeUndefined();
  lines = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
}, 120_000);
afterAll(async () => {
  await pg?.stop();
  await database?.release();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Line = Record<string, unknown>;
const hashing = (dir: string) => ({ MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_EMBEDDINGS_DIMENSIONS: '256' });
const fileOf = (rows: Line[]): string => {
  const file = join(tempDir(), 'import.jsonl');
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
};
const exportedRecords = async (env: Record<string, string>, ...args: string[]): Promise<Line[]> => {
  const run = await mnemo(env, 'export', '--no-progress', ...args);
  expect(run.error, run.stderr).toBeUndefined();
  return run.stdout.trimEnd().split('\n').slice(1).map((l) => JSON.parse(l) as Line);
};

const stores: { name: string; env: (dir: string) => Record<string, string> }[] = [
  { name: 'SQLite', env: (dir) => hashing(dir) },
  // One database for the file (a schema of the worker's PGlite): this case runs once, so its store starts empty.
  { name: 'PostgreSQL', env: (dir) => ({ ...hashing(dir), MNEMO_DATABASE_URL: pg.url, MNEMO_DATABASE_POOL_SIZE: '2' }) },
];

describe.each(stores)('mnemo import checks topic ids across scopes before writing ($name)', (store) => {
  it('refuses a topic id or a memory\'s topic of another scope, and a topic name taken under another id, naming the line', async () => {
    const env = store.env(tempDir());
    const [header, ops, home, deploys, garden] = lines as [Line, Line, Line, Line, Line];
    expect([ops.name, home.name, deploys.title, garden.title]).toEqual(['Ops', 'Home', 'Deploys', 'Garden']);

    // The target already holds the Home topic's id in another tenant (globex), with a memory in it.
    const globex = fileOf([header, { ...home, tenant: 'globex' }, { ...garden, tenant: 'globex', id: 'globex-garden' }]);
    const first = await mnemo(env, 'import', globex, '--no-progress');
    expect(first.error, first.stderr).toBeUndefined();
    expect(first.stdout).toContain('imported: 1 memories');

    // acme's file: line 3 is the Home topic, whose id globex holds. Nothing of the file is written, and a rerun says
    // the same (before the check, the Ops topic of line 2 was written, then the insert of line 3 failed, every time).
    const file = fileOf(lines);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await mnemo(env, 'import', file, '--no-progress');
      expect(refused.error).toBeInstanceOf(CliError);
      expect((refused.error as Error).message).toBe(
        `${file} line 3: topic id ${home.id as string} is already used by a topic of another tenant, mode or workspace; nothing was imported`);
      expect(await exportedRecords(env, '--tenant', 'acme')).toEqual([]);
    }
    expect((await exportedRecords(env, '--tenant', 'globex')).map((r) => r.kind)).toEqual(['topic', 'memory']);

    // With --skip-bad: that topic line and the memory naming it are left out, each reported; the rest is imported.
    const skipped = await mnemo(env, 'import', file, '--skip-bad', '--no-progress');
    expect(skipped.error, skipped.stderr).toBeUndefined();
    expect(skipped.stderr).toContain(`${file} line 3 skipped: topic id ${home.id as string} is already used by a topic of another tenant, mode or workspace`);
    expect(skipped.stderr).toContain(`${file} line 5 skipped: topic_id ${home.id as string} names a topic of another tenant, mode or workspace`);
    expect(skipped.stdout).toContain('imported: 1 memories');
    expect(skipped.stdout).toContain('1 topics; 0 already stored; 2 bad lines skipped');
    expect((await exportedRecords(env, '--tenant', 'acme')).map((r) => [r.kind, r.id])).toEqual([['topic', ops.id], ['memory', deploys.id]]);

    // A memory alone naming another scope's topic (no topic line at all) is refused too.
    const memoryOnly = fileOf([header, { ...garden, id: 'acme-garden-2', client_id: null }]);
    const refusedMemory = await mnemo(env, 'import', memoryOnly, '--no-progress');
    expect((refusedMemory.error as Error).message).toBe(
      `${memoryOnly} line 2: topic_id ${home.id as string} names a topic of another tenant, mode or workspace; nothing was imported`);

    // A new topic id whose name its parent already has in the workspace (Ops, stored above under another id).
    const renamedId = `${(ops.id as string).slice(0, -4)}beef`;
    const sameName = fileOf([header, { ...ops, id: renamedId }, { ...deploys, id: 'acme-deploys-2', client_id: null, topic_id: renamedId }]);
    const refusedName = await mnemo(env, 'import', sameName, '--no-progress');
    expect((refusedName.error as Error).message).toBe(
      `${sameName} line 2: a topic named "Ops" under the same parent already exists in its workspace (id ${ops.id as string}); nothing was imported`);
    // Its other workspace is another place: the same name there is fine.
    const elsewhere = fileOf([header, { ...ops, id: renamedId, workspace: 'side' }, { ...deploys, id: 'side-deploys', workspace: 'side', client_id: null, topic_id: renamedId }]);
    const accepted = await mnemo(env, 'import', elsewhere, '--no-progress');
    expect(accepted.error, accepted.stderr).toBeUndefined();
    expect(accepted.stdout).toContain('imported: 1 memories');
    expect(accepted.stdout).toContain('1 topics');

    // The source file into the source store again: every topic already there in its own scope, nothing refused.
    const again = await mnemo(hashing(source), 'import', file, '--no-progress');
    expect(again.error, again.stderr).toBeUndefined();
    expect(again.stdout).toContain('0 topics; 2 already stored; 0 bad lines skipped');
  }, 120_000);

  it('with --skip-bad, leaves out the memories and sub-topics of a topic line left out, each naming that line', async () => {
    const env = store.env(tempDir());
    // Fresh ids in a tenant of its own: topic ids are unique in the whole store (the PGlite store is shared).
    const [header, ops0, home0, deploys0, garden0] = lines as [Line, Line, Line, Line, Line];
    const idOf = (l: Line, tail: string) => `${(l.id as string).slice(0, -4)}${tail}`;
    const ops = { ...ops0, tenant: 'initech', id: idOf(ops0, 'f00d') };
    const home = { ...home0, tenant: 'initech', id: idOf(home0, 'd00d') };
    const deploys = { ...deploys0, tenant: 'initech', client_id: null, topic_id: ops.id };
    const garden = { ...garden0, tenant: 'initech', id: 'initech-garden', client_id: null, topic_id: home.id };
    const subId = idOf(ops0, 'cafe');
    const file = fileOf([
      header,
      { ...ops, mode: 'prod' }, // line 2: bad, its id still readable
      home, // line 3
      // line 4: a memory in the topic left out, before the sub-topic that comes after it in the file
      { ...deploys, id: 'deploys-in-ops' },
      { ...ops, id: subId, name: 'Night deploys', parent_id: ops.id }, // line 5: a sub-topic of it
      { ...deploys, id: 'deploys-in-sub', topic_id: subId }, // line 6: a memory in the sub-topic
      garden, // line 7
    ]);
    const run = await mnemo(env, 'import', file, '--skip-bad', '--no-progress');
    expect(run.error, run.stderr).toBeUndefined();
    expect(run.stderr).toContain(`${file} line 2 skipped: mode must be "live" or "test"`);
    expect(run.stderr).toContain(`${file} line 4 skipped: its topic (line 2) was left out`);
    expect(run.stderr).toContain(`${file} line 5 skipped: its parent topic (line 2) was left out`);
    expect(run.stderr).toContain(`${file} line 6 skipped: its topic (line 5) was left out`);
    expect(run.stdout).toContain('imported: 1 memories');
    expect(run.stdout).toContain('1 topics; 0 already stored; 4 bad lines skipped');
    // Nothing written names a topic the import did not write.
    expect((await exportedRecords(env, '--tenant', 'initech')).map((r) => [r.kind, r.id])).toEqual([['topic', home.id], ['memory', garden.id]]);

    // A bad copy of a topic the store already holds in that scope takes nothing with it: the topic is there.
    const again = fileOf([header, { ...home, mode: 'prod' }, { ...garden, id: 'initech-garden-2' }]);
    const rerun = await mnemo(env, 'import', again, '--skip-bad', '--no-progress');
    expect(rerun.error, rerun.stderr).toBeUndefined();
    expect(rerun.stderr).toContain(`${again} line 2 skipped: mode must be "live" or "test"`);
    expect(rerun.stderr).not.toContain('line 3 skipped');
    expect(rerun.stdout).toContain('imported: 1 memories');
  }, 120_000);
});
