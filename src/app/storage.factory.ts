import { createSqliteStorage, type SqliteStorage } from '../adapters/storage/sqlite/sqlite.storage.ts';
import type { WarningLog } from '../core/warning-log.ts';
import type { Config } from './config.ts';

/** The store the server and the CLI open, with the same settings (both write to the same file). */
export function createStorage(config: Pick<Config, 'databaseFile' | 'sqliteSynchronous'>, log?: WarningLog): SqliteStorage {
  return createSqliteStorage({ file: config.databaseFile, synchronous: config.sqliteSynchronous, ...(log ? { log } : {}) });
}
