import type { Storage } from '../core/storage.port.ts';
import type { WarningLog } from '../core/warning-log.ts';
import type { Config } from './config.ts';

/** What the factory reads from the configuration. */
export type StorageConfig = Pick<Config, 'databaseFile' | 'sqliteSynchronous' | 'databaseUrl' | 'databasePoolSize'>
  & Partial<Pick<Config, 'searchThreads' | 'databasePreparedStatements'>>;

/** The adapters the configuration can name: PostgreSQL when `MNEMO_DATABASE_URL` is set, else the SQLite file. */
export type StorageKind = 'sqlite' | 'postgres';

export const storageKindOf = (config: StorageConfig): StorageKind => (config.databaseUrl === null ? 'sqlite' : 'postgres');

/**
 * The store the server and the CLI open, chosen by the configuration and with the same settings (both write to the
 * same data). Async because a networked store connects and migrates before it is usable; each adapter is imported
 * only when chosen, so a deployment loads just its own driver.
 */
export async function createStorage(config: StorageConfig, log?: WarningLog): Promise<Storage> {
  switch (storageKindOf(config)) {
    case 'sqlite': {
      const { createSqliteStorage } = await import('../adapters/storage/sqlite/sqlite.storage.ts');
      return createSqliteStorage({
        file: config.databaseFile, synchronous: config.sqliteSynchronous, searchThreads: config.searchThreads ?? 0, ...(log ? { log } : {}),
      });
    }
    case 'postgres': {
      const [{ default: pg }, { pgPoolExecutor }, { createPostgresStorage }] = await Promise.all([
        import('pg'), import('../adapters/storage/postgres/pg-executor.ts'), import('../adapters/storage/postgres/postgres.storage.ts'),
      ]);
      const pool = new pg.Pool({ connectionString: config.databaseUrl!, max: config.databasePoolSize });
      try {
        const executor = pgPoolExecutor(pool, { preparedStatements: config.databasePreparedStatements ?? true, ...(log ? { log } : {}) });
        return await createPostgresStorage(executor, { searchThreads: config.searchThreads ?? 0 });
      } catch (err) {
        await pool.end().catch(() => undefined);
        throw err;
      }
    }
  }
}
