import { statSync } from 'node:fs';
import type { WarningLog } from '../../core/warning-log.ts';

/**
 * What the mode bits of a store file (the SQLite database, its -wal and -shm, the data directory) allow: `refuse`
 * when a group or other users may write it (they could change memories, keys or audit rows), `warn` when they may
 * otherwise reach it (read it, or enter the directory), `ok` when only its owner may.
 */
export type PermissionVerdict = 'ok' | 'warn' | 'refuse';

export function permissionVerdict(mode: number): PermissionVerdict {
  if ((mode & 0o022) !== 0) return 'refuse';
  return (mode & 0o077) !== 0 ? 'warn' : 'ok';
}

/** A store file others may write: the store is not opened (the message names the file, its mode and the fix). */
export class ExposedStoreFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExposedStoreFileError';
  }
}

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * Checks each path that exists (missing ones are skipped): throws ExposedStoreFileError on the first that others
 * may write, and reports to `log` each that others may read. Skipped where files have no POSIX modes (Windows).
 */
export function checkStoreFiles(paths: readonly string[], log?: WarningLog): void {
  if (process.platform === 'win32') return;
  for (const path of paths) {
    let stats;
    try {
      stats = statSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const verdict = permissionVerdict(stats.mode);
    if (verdict === 'ok') continue;
    const mode = octal(stats.mode);
    const fix = `chmod ${stats.isDirectory() ? '700' : '600'} ${path}`;
    if (verdict === 'refuse') throw new ExposedStoreFileError(`${path} is writable by other users (mode ${mode}): run \`${fix}\``);
    const access = (stats.mode & 0o044) !== 0 ? 'readable by' : 'open to';
    log?.warn({ file: path, mode, fix }, `${path} is ${access} other users (mode ${mode}): run \`${fix}\``);
  }
}
