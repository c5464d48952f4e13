import type { Client, Pool, PoolClient } from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { WarningLog } from '../../../core/warning-log.ts';
import { isLostPreparedStatement, PreparedStatementNames } from './pg-prepared-statements.ts';

/** What the repositories need from a connection: parameterised queries, and scripts of several statements. */
export interface PgQueryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * The one seam between the PostgreSQL adapter and a driver, so the same repositories run on a real server through
 * `pg` and in process on PGlite (tests). `transaction` runs `fn` on one connection between BEGIN and COMMIT, and
 * rolls back when it throws.
 */
export interface PgExecutor extends PgQueryable {
  /**
   * `one`: a single session whose transactions run one at a time (PGlite in process), so commit order is already
   * sequence order; `many`: concurrent connections (a Pool), whose event appends must be serialised (PgOutbox).
   */
  readonly sessions: 'one' | 'many';
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` in one transaction with all of them sent before the first answer (a pipelining connection): one
   * round trip instead of one per statement and two more for BEGIN and COMMIT. Each statement's rows, in order; the
   * first failure rolls the whole transaction back and is thrown. Absent, {@link pipelinedTransaction} runs them one
   * by one in `transaction`.
   */
  pipelineTransaction?(statements: readonly PgStatement[]): Promise<unknown[][]>;
  /**
   * Listens on `channel` over a session of its own (LISTEN): `onNotification` gets each NOTIFY's payload, `onLost`
   * is called once if that session ends other than by `close`. Absent, the executor cannot listen.
   */
  listen?(channel: string, onNotification: (payload: string) => void, onLost: (err: Error) => void): Promise<PgListener>;
  close(): Promise<void>;
}

/** A LISTEN session of {@link PgExecutor.listen}. */
export interface PgListener { close(): Promise<void> }

/** One parameterised statement of a {@link PgExecutor.pipelineTransaction}. */
export interface PgStatement { sql: string; params: readonly unknown[] }

/** `statements` in one transaction, pipelined where the executor can (PgExecutor.pipelineTransaction). */
export async function pipelinedTransaction(db: PgExecutor, statements: readonly PgStatement[]): Promise<unknown[][]> {
  if (db.pipelineTransaction) return db.pipelineTransaction(statements);
  return db.transaction(async (tx) => {
    const out: unknown[][] = [];
    for (const s of statements) out.push(await tx.query(s.sql, s.params));
    return out;
  });
}

/**
 * PostgreSQL text cannot hold NUL (SQLite can): a NUL in a string parameter (or a text[] element) becomes U+FFFD, so an id, content or
 * name carrying one is stored or looked up instead of failing the statement.
 */
const pgParam = (v: unknown): unknown => {
  if (typeof v === 'string') return v.replaceAll('\u0000', '\ufffd');
  return Array.isArray(v) ? v.map(pgParam) : v; // text[] parameters (tags)
};
export const pgParams = (params: readonly unknown[]): unknown[] => params.map(pgParam);

/**
 * A parameter `pg` cannot fail to encode (an object's JSON or `toPostgres` can throw): a pipelined statement that
 * failed in the driver would never reach the server, which would then run the statements after it and COMMIT.
 */
const isPlainParam = (v: unknown): boolean => v === null || v === undefined || ['string', 'number', 'boolean'].includes(typeof v)
  || (Array.isArray(v) && v.every(isPlainParam));

export interface PgPoolExecutorOptions {
  /**
   * Queries outside transactions and the statements of pipelined transactions (writes) go as named, prepared
   * statements once their text repeats (pg-prepared-statements.ts; default true). Off for a pooler that cannot keep them (PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`); a server that loses one turns them off by itself and says so in `log`.
   */
  preparedStatements?: boolean;
  log?: WarningLog;
}

/**
 * A `pg` Pool: each query on any free connection, each transaction on one checked-out client. The pool's connections
 * are made pipelining (`pg`'s `pipeline` option, for connections opened from now on): a query sent while another is
 * under way goes out at once instead of after its answer, which only pipelineTransaction does on purpose.
 */
export function pgPoolExecutor(pool: Pool, options: PgPoolExecutorOptions = {}): PgExecutor {
  pool.options.pipeline = true;
  const prepared = new PreparedStatementNames(options.preparedStatements ?? true);
  /**
   * True when `err` says the server lost a prepared statement (isLostPreparedStatement): preparing stops, with one
   * warning, and the caller sends its statements again unnamed (they did not run).
   */
  const preparedStatementLost = (err: unknown): boolean => {
    if (!isLostPreparedStatement(err)) return false;
    if (prepared.enabled) {
      prepared.turnOff();
      options.log?.warn({ code: (err as { code?: string }).code, reason: (err as Error).message },
        'PostgreSQL did not keep a prepared statement (a transaction-mode pooler?): statements go unprepared from '
        + 'now on; MNEMO_DATABASE_PREPARED_STATEMENTS=off says so from the start');
    }
    return true;
  };
  /**
   * A query on one checked-out connection (as pg's Pool.query), named when preparing is on and its text repeats (the
   * search path's catch-ups and rows).
   */
  const oneQuery = async (sql: string, params: readonly unknown[]): Promise<unknown[]> => {
    const client = await pool.connect();
    // As pg's Pool.query does: an error of the connection meanwhile is the query's, and a connection whose query
    // failed is not reused.
    let released = false;
    const release = (err?: Error) => {
      if (released) return;
      released = true;
      client.release(err);
    };
    client.on('error', release);
    try {
      const name = prepared.nameFor(sql, client);
      let rows: unknown[];
      if (name === null) rows = (await client.query(sql, pgParams(params))).rows;
      else {
        try {
          rows = (await client.query({ name, text: sql, values: pgParams(params) })).rows;
        } catch (err) {
          if (!preparedStatementLost(err)) throw err;
          rows = (await client.query(sql, pgParams(params))).rows;
        }
      }
      release();
      return rows;
    } catch (err) {
      release(err as Error);
      throw err;
    } finally {
      client.removeListener('error', release);
    }
  };
  const transaction = async <T>(client: PoolClient, fn: (tx: PgQueryable) => Promise<T>): Promise<T> => {
    try {
      await client.query('BEGIN');
      const out = await fn({
        query: async <R>(sql: string, params: readonly unknown[] = []) => (await client.query(sql, pgParams(params))).rows as R[],
        exec: async (sql) => { await client.query(sql); },
      });
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  };
  return {
    sessions: 'many',
    async query<R>(sql: string, params: readonly unknown[] = []) {
      return await oneQuery(sql, params) as R[];
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        return await transaction(client, fn);
      } finally {
        client.release();
      }
    },
    async pipelineTransaction(statements) {
      const client = await pool.connect();
      try {
        if (!client.pipeline || !statements.every((s) => s.params.every(isPlainParam))) {
          return await transaction(client, async (tx) => {
            const out: unknown[][] = [];
            for (const s of statements) out.push(await tx.query(s.sql, s.params));
            return out;
          });
        }
        // After a failed statement the server refuses the rest of the transaction, and its COMMIT rolls it back.
        const pipelined = async (): Promise<unknown[][]> => {
          const sent = [client.query('BEGIN'), ...statements.map((s) => {
            const name = prepared.nameFor(s.sql, client);
            return name === null ? client.query(s.sql, pgParams(s.params)) : client.query({ name, text: s.sql, values: pgParams(s.params) });
          }), client.query('COMMIT')];
          const settled = await Promise.allSettled(sent);
          const failed = settled.find((r) => r.status === 'rejected');
          if (failed) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw failed.reason;
          }
          return settled.slice(1, -1).map((r) => (r as PromiseFulfilledResult<{ rows: unknown[] }>).value.rows);
        };
        try {
          return await pipelined();
        } catch (err) {
          // Rolled back whole: sent again, unnamed.
          if (!preparedStatementLost(err)) throw err;
          return await pipelined();
        }
      } finally {
        client.release();
      }
    },
    async listen(channel, onNotification, onLost) {
      // A client outside the pool, as its session must stay LISTENing; the pool's own Client class and settings, with
      // TCP keep-alive so that a silently dropped connection ends (and is reported lost) instead of idling forever.
      const client = new (pool as unknown as { Client: new (config: unknown) => Client }).Client({ ...pool.options, keepAlive: true });
      let closing = false;
      let lost = false;
      const fail = (err: Error) => {
        if (closing || lost) return;
        lost = true;
        onLost(err);
      };
      client.on('error', fail);
      client.on('end', () => fail(new Error('the LISTEN session ended')));
      client.on('notification', (m) => { if (m.channel === channel) onNotification(m.payload ?? ''); });
      try {
        await client.connect();
        await client.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
      } catch (err) {
        closing = true;
        await client.end().catch(() => undefined);
        throw err;
      }
      return {
        async close() {
          closing = true;
          await client.end().catch(() => undefined);
        },
      };
    },
    async close() {
      await pool.end();
    },
  };
}

/** An in-process PGlite database (a single session: its transactions run one at a time). */
export function pgliteExecutor(db: PGlite): PgExecutor {
  return {
    sessions: 'one',
    async query<R>(sql: string, params: readonly unknown[] = []) {
      return (await db.query<R>(sql, pgParams(params))).rows;
    },
    async exec(sql) {
      await db.exec(sql);
    },
    async transaction(fn) {
      return db.transaction((tx) => fn({
        query: async <R>(sql: string, params: readonly unknown[] = []) => (await tx.query<R>(sql, pgParams(params))).rows,
        exec: async (sql) => { await tx.exec(sql); },
      }));
    },
    async listen(channel, onNotification) {
      // In process: the one session listens, and nothing can cut it off.
      const unlisten = await db.listen(channel, onNotification);
      return { close: () => unlisten() };
    },
    async close() {
      await db.close();
    },
  };
}

/** Positional parameters for a statement built piece by piece: `add` returns the placeholder of a value. */
export class SqlParams {
  readonly values: unknown[] = [];
  constructor(initial: readonly unknown[] = []) {
    this.values.push(...initial);
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** True when a driver error is a unique violation (SQLSTATE 23505), optionally of the named constraint. */
export function isPgUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; message?: string };
  if (e?.code !== '23505') return false;
  return constraint === undefined || e.constraint === constraint || (e.message ?? '').includes(constraint);
}

/** Timestamps travel as ISO text, which both drivers send alike; they come back as Date from timestamptz. */
export const pgTime = (d: Date): string => d.toISOString();
export const pgTimeOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
/** int8 comes back as text from `pg`, as a number from PGlite. */
export const pgInt = (v: unknown): number => Number(v);

/**
 * JSON text for a jsonb parameter. jsonb refuses two escapes JSON.stringify writes: a lone UTF-16 surrogate
 * (`\udfff`) and NUL (`\u0000`); both become U+FFFD, as a lone surrogate already does in any text column (UTF-8
 * cannot hold it). Escaped backslashes are matched first, so a literal `\` followed by `u0000` stays as it is.
 */
export const pgJson = (value: unknown): string => JSON.stringify(value).replace(
  /\\(\\|u(?:d[89a-f][0-9a-f]{2}|0000))/g, (match) => (match === '\\\\' ? match : '\\ufffd'),
);
