import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { WarningLog } from '../../../core/warning-log.ts';
import { checkStoreFiles } from '../file-permissions.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';

export type SqliteDb = Database.Database;

/**
 * When SQLite makes a commit durable (PRAGMA synchronous, in WAL mode). `full`: the WAL is fsynced at every commit,
 * so a write that was acknowledged survives power loss. `normal`: fsync only at checkpoints; faster, still safe
 * against a process crash, and the file stays consistent, but the last commits before a power loss or kernel panic
 * may be lost. `off` is not offered: it risks a corrupt file, not just lost writes.
 */
export const SQLITE_SYNCHRONOUS = ['full', 'normal'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];

/** PRAGMA synchronous reads back as a number. */
const SYNCHRONOUS_LEVEL: Record<SqliteSynchronous, number> = { normal: 1, full: 2 };

export interface SqliteOptions {
  /** Default `full`: an acknowledged write is durable. */
  synchronous?: SqliteSynchronous;
}

/**
 * Opens (creating if needed) a SQLite file in WAL mode and brings its schema up to date. WAL lets the CLI
 * (`mnemo keys create`) write while a server reads and writes the same file. The directory, the file, its -wal and
 * its -shm must not be writable by other users (ExposedStoreFileError); `log` hears of those others can read.
 */
export function openSqlite(file: string, options: SqliteOptions & { log?: WarningLog } = {}): SqliteDb {
  if (file !== ':memory:' && file !== '') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    checkStoreFiles([dirname(file), file, `${file}-wal`, `${file}-shm`], options.log);
    // Created 0600 here whatever the umask: SQLite gives the -wal and -shm it creates the database file's mode.
    if (!existsSync(file)) createPrivateFile(file);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${SYNCHRONOUS_LEVEL[options.synchronous ?? 'full']}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // What a write deletes or replaces is overwritten with zeros in the file (and its WAL), not left in free space:
  // a forgotten memory's content must not be recoverable from the file (docs/api.md, "Forgetting"). FTS5's own
  // secure-delete (migration 19) does the same inside the keyword index.
  db.pragma('secure_delete = ON');
  migrateSqlite(db);
  return db;
}

function createPrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** The synchronous setting the connection reports (what SQLite actually does, not what was asked). */
export function synchronousOf(db: SqliteDb): SqliteSynchronous | 'off' | 'extra' {
  const level = db.pragma('synchronous', { simple: true }) as number;
  return (['off', 'normal', 'full', 'extra'] as const)[level] ?? 'off';
}

/**
 * Applies the migrations not yet recorded in `schema_migrations` (all of them by default; a prefix of them builds the
 * store an older version wrote, for upgrade tests), each once, in one IMMEDIATE transaction.
 */
export function migrateSqlite(db: SqliteDb, migrations: readonly Migration[] = MIGRATIONS): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  // IMMEDIATE takes the write lock first, so two processes starting together cannot both apply a migration.
  const apply = db.transaction(() => {
    const done = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
    );
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(m.version, m.name, new Date().toISOString());
    }
  });
  apply.immediate();
}

/** Float32Array <-> BLOB without copying more than once. */
export const vectorToBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
export function blobToVector(blob: Buffer): Float32Array {
  const copy = new Float32Array(blob.byteLength / 4);
  new Uint8Array(copy.buffer).set(blob);
  return copy;
}
