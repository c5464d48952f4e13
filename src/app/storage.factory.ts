import type { Storage } from '../core/storage.port.ts';
import type { WarningLog } from '../core/warning-log.ts';
import type { Config } from './config.ts';

/** What the factory reads from the configuration. */
export type StorageConfig = Pick<Config, 'databaseFile' | 'sqliteSynchronous'>;

/** The adapters the configuration can name. config.ts still refuses MNEMO_DATABASE_URL, so only SQLite today. */
export type StorageKind = 'sqlite';

export const storageKindOf = (_config: StorageConfig): StorageKind => 'sqlite';

/**
 * The store the server and the CLI open, chosen by the configuration and with the same settings (both write to the
 * same data). Async because a networked store connects and migrates before it is usable; each adapter is imported
 * only when chosen, so a deployment loads just its own driver.
 */
export async function createStorage(config: StorageConfig, log?: WarningLog): Promise<Storage> {
  switch (storageKindOf(config)) {
    case 'sqlite': {
      const { createSqliteStorage } = await import('../adapters/storage/sqlite/sqlite.storage.ts');
      return createSqliteStorage({ file: config.databaseFile, synchronous: config.sqliteSynchronous, ...(log ? { log } : {}) });
    }
  }
}
