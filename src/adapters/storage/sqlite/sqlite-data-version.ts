import type { SqliteDb } from './sqlite.database.ts';

/**
 * Tells an in-process cache that another connection (another process, such as the CLI) committed to the file since
 * it last asked: SQLite's `data_version` moves on then, and never for this connection's own writes.
 */
export class SqliteDataVersion {
  private readonly read;
  private last: number;

  constructor(db: SqliteDb) {
    this.read = db.prepare('PRAGMA data_version').pluck();
    this.last = this.read.get() as number;
  }

  changedElsewhere(): boolean {
    const version = this.read.get() as number;
    if (version === this.last) return false;
    this.last = version;
    return true;
  }
}
