import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pgPoolExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { axisVector, makeMemory, scopeA } from '../support/fixtures.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';

/**
 * The pool executor's prepared statements (pg-prepared-statements.ts) through the `pg` driver, against PGlite served
 * on loopback: one session shared by every connection, so `pg_prepared_statements` shows what all of them prepared,
 * and two connections preparing the same text is what a name without the connection's suffix would break.
 */
describe('PostgreSQL prepared statements', () => {
  let database: FileDatabase;
  let served: SharedPglite;
  const opened: PgExecutor[] = [];
  beforeAll(async () => {
    database = await fileDatabase();
    served = await servePglite(database.pglite);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((e) => e.close()));
    await database.pglite.exec('DEALLOCATE ALL');
  });
  afterAll(async () => {
    await served?.stop();
    await database?.release();
  });

  const open = (options: Parameters<typeof pgPoolExecutor>[1] = {}, max = 2): PgExecutor => {
    const executor = pgPoolExecutor(new pg.Pool({ connectionString: served.url, max }), options);
    opened.push(executor);
    return executor;
  };
  const preparedTexts = async (): Promise<string[]> =>
    (await database.pglite.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name'))
      .rows.map((r) => `${r.name.replace(/_[0-9a-f]+$/, '')}: ${r.statement}`);

  it('prepares a text once it repeats, under its hash, and answers as unprepared', async () => {
    const db = open();
    const once = 'SELECT $1::int + 1 AS n';
    const twice = 'SELECT $1::int * 2 AS n';
    expect(await db.query(once, [1])).toEqual([{ n: 2 }]);
    expect(await db.query(twice, [2])).toEqual([{ n: 4 }]);
    expect(await preparedTexts()).toEqual([]);
    expect(await db.query(twice, [3])).toEqual([{ n: 6 }]);
    expect(await db.query(twice, [4])).toEqual([{ n: 8 }]);
    const texts = await preparedTexts();
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^mnemo_[0-9a-f]{24}: SELECT \$1::int \* 2 AS n$/);
  });

  it('prepares nothing when told not to', async () => {
    const db = open({ preparedStatements: false });
    for (let i = 0; i < 4; i++) expect(await db.query('SELECT $1::int * 3 AS n', [i])).toEqual([{ n: 3 * i }]);
    expect(await preparedTexts()).toEqual([]);
  });

  it('gives each connection names of its own, so connections sharing one session do not collide', async () => {
    const warnings: string[] = [];
    const db = open({ log: { warn: (_d, message) => warnings.push(message) } }, 4);
    const text = 'SELECT $1::int - 1 AS n, pg_sleep(0.01) IS NULL AS slept';
    // Eight at once over four connections, three times: every connection prepares the same text.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => db.query(text, [i])));
      expect(answers.map((rows) => (rows[0] as { n: number }).n)).toEqual([-1, 0, 1, 2, 3, 4, 5, 6]);
    }
    const names = (await database.pglite.query<{ name: string }>('SELECT name FROM pg_prepared_statements')).rows.map((r) => r.name);
    expect(names.length).toBeGreaterThan(1);
    expect(new Set(names.map((n) => n.replace(/_[0-9a-f]+$/, ''))).size).toBe(1);
    expect(warnings).toEqual([]);
  });

  it('sends a statement the server lost again unprepared, stops preparing and says so once', async () => {
    const warnings: { details: object; message: string }[] = [];
    const db = open({ log: { warn: (details, message) => warnings.push({ details, message }) } }, 1);
    const text = 'SELECT $1::int + 10 AS n';
    await db.query(text, [0]);
    await db.query(text, [0]);
    expect(await preparedTexts()).toHaveLength(1);
    // What a transaction-mode pooler does when it hands the connection another server session.
    await database.pglite.exec('DEALLOCATE ALL');
    expect(await db.query(text, [5])).toEqual([{ n: 15 }]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toMatchObject({ code: '26000' });
    expect(warnings[0]!.message).toContain('MNEMO_DATABASE_PREPARED_STATEMENTS=off');
    for (let i = 0; i < 3; i++) expect(await db.query(text, [i])).toEqual([{ n: 10 + i }]);
    expect(await preparedTexts()).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('reads a table that changed shape under a prepared statement (another node\'s migration) unprepared', async () => {
    const warnings: string[] = [];
    const db = open({ log: { warn: (_d, message) => warnings.push(message) } }, 1);
    await database.pglite.exec("CREATE TABLE reshaped (a integer); INSERT INTO reshaped VALUES (1)");
    try {
      const text = 'SELECT * FROM reshaped WHERE a > $1::int';
      expect(await db.query(text, [0])).toEqual([{ a: 1 }]);
      expect(await db.query(text, [0])).toEqual([{ a: 1 }]);
      await database.pglite.exec("ALTER TABLE reshaped ADD COLUMN b text DEFAULT 'x'");
      expect(await db.query(text, [0])).toEqual([{ a: 1, b: 'x' }]);
      expect(warnings).toHaveLength(1);
    } finally {
      await database.pglite.exec('DROP TABLE reshaped');
    }
  });

  it('prepares a pipelined transaction\'s statements, and sends one the server lost again whole, writing once', async () => {
    const warnings: string[] = [];
    const db = open({ log: { warn: (_d, message) => warnings.push(message) } }, 1);
    await database.pglite.exec('CREATE TABLE prepared_writes (n integer)');
    try {
      const write = (n: number) => db.pipelineTransaction!([
        { sql: 'INSERT INTO prepared_writes (n) VALUES ($1::int)', params: [n] },
        { sql: 'SELECT count(*)::int AS c FROM prepared_writes', params: [] },
      ]);
      await write(1);
      expect(await write(2)).toEqual([[], [{ c: 2 }]]);
      expect((await preparedTexts()).map((t) => t.replace(/^mnemo_[0-9a-f]{24}: /, '')).sort()).toEqual(
        ['INSERT INTO prepared_writes (n) VALUES ($1::int)', 'SELECT count(*)::int AS c FROM prepared_writes'].sort());
      await database.pglite.exec('DEALLOCATE ALL');
      // The lost INSERT rolls the first attempt back: the row is written once, by the attempt sent unnamed.
      expect(await write(3)).toEqual([[], [{ c: 3 }]]);
      expect(warnings).toHaveLength(1);
      expect((await database.pglite.query<{ n: number }>('SELECT n FROM prepared_writes ORDER BY n')).rows.map((r) => r.n)).toEqual([1, 2, 3]);
      expect(await preparedTexts()).toEqual([]);
    } finally {
      await database.pglite.exec('DROP TABLE prepared_writes');
    }
  });

  it('prepares the search path: a semantic search\'s index catch-up and its rows', async () => {
    const db = open({}, 2);
    const storage: Storage = await createPostgresStorage(db, { keyCache: false });
    try {
      const memory = makeMemory(scopeA, { title: 't', content: 'c' });
      await storage.memories.applyAtomically(scopeA, [{ kind: 'insert', memory, vector: { modelId: 'm', vector: axisVector(4, 0, 1, 0) } }]);
      await database.pglite.exec('DEALLOCATE ALL');
      const query = { vector: axisVector(4, 0, 1, 0), modelId: 'm', limit: 5, minCosine: 0, filter: {} };
      for (let i = 0; i < 3; i++) expect((await storage.memories.rankSimilar(scopeA, query)).total).toBe(1);
      expect((await storage.memories.searchSimilar(scopeA, query)).hits.map((h) => h.memory.id)).toEqual([memory.id]);
      expect((await storage.memories.searchSimilar(scopeA, query)).hits.map((h) => h.memory.id)).toEqual([memory.id]);
      const texts = await preparedTexts();
      expect(texts.some((t) => t.includes('FROM vector_changes_after('))).toBe(true);
      expect(texts.some((t) => t.includes('FROM memories m'))).toBe(true);
    } finally {
      await storage.close();
      opened.splice(opened.indexOf(db), 1);
    }
  });
});
