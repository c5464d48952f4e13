import Database from 'better-sqlite3';

/**
 * A read-only connection of a worker thread to the store file (the loader's, a scan thread's): it waits for a writer's
 * lock instead of failing, and its memory is bounded by what the caller asks for (mapped bytes, page cache).
 */
export function openReadOnly(file: string, memory: { mmapBytes: number; cacheKiB: number }): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma(`mmap_size = ${memory.mmapBytes}`);
    db.pragma(`cache_size = -${memory.cacheKiB}`);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
