import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';

/**
 * The multi-node tests stand on test/support/pglite-server.ts: one PGlite serving several `pg` pools. Without its
 * one-round-trip-at-a-time rule, pglite-socket interleaves two connections' Parse and Bind and this fails with
 * "portal does not exist" or wrong answers.
 */
describe('PGlite served to several pg pools', () => {
  let pglite: PGlite;
  let database: FileDatabase | undefined;
  let server: SharedPglite;
  beforeAll(async () => {
    database = await fileDatabase();
    pglite = database.pglite;
    server = await servePglite(pglite);
    await pglite.exec('CREATE TABLE shared_counter (id serial PRIMARY KEY, v int NOT NULL)');
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await database?.release();
  });

  it('answers concurrent parameterised queries and transactions of two pools correctly', async () => {
    const pools = [new pg.Pool({ connectionString: server.url, max: 3 }), new pg.Pool({ connectionString: server.url, max: 3 })];
    try {
      const work: Promise<void>[] = [];
      for (let i = 0; i < 150; i++) {
        const pool = pools[i % 2]!;
        if (i % 3 === 0) {
          work.push((async () => {
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              await client.query('INSERT INTO shared_counter (v) VALUES ($1)', [i]);
              const mine = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM shared_counter WHERE v = $1', [i]);
              expect(mine.rows[0]!.n).toBe(1);
              await client.query(i % 2 ? 'ROLLBACK' : 'COMMIT');
            } finally {
              client.release();
            }
          })());
        } else {
          work.push(pool.query<{ s: number }>('SELECT $1::int + $2::int AS s', [i, 1]).then((r) => { expect(r.rows[0]!.s).toBe(i + 1); }));
        }
      }
      await Promise.all(work);
      // Every third i inserts; the odd ones among them roll back.
      const committed = Array.from({ length: 150 }, (_, i) => i).filter((i) => i % 3 === 0 && i % 2 === 0);
      const rows = await pools[1]!.query<{ v: number }>('SELECT v FROM shared_counter ORDER BY v');
      expect(rows.rows.map((r) => r.v)).toEqual(committed);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
