import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { spareRows, type ScopeRows } from './sqlite-vector-rows.ts';
import { SqliteWorkspaceVersions } from './sqlite-workspace-versions.ts';
import { readMatrixFile, writeMatrixFile } from './vector-scan/matrix-file.ts';
import type { VectorMatrix } from './vector-scan/vector-matrix.ts';

/**
 * A workspace's vector index persisted beside the store file (`<store>-vectors/`, one file per workspace and model:
 * matrix-file.ts), so that a restart reads the int8 codes in large chunks instead of quantising every stored float.
 * The store says which file is current (migration 24: vector_snapshots, a random token per file and the workspace
 * version it reflects); a file is used only while that version is still the workspace's and the file carries the
 * row's token. Any write since (from any connection), a file cut short, replaced, of another format or left from
 * another store, fails one of those checks: the index is then loaded from the floats, as without a file, and saved
 * again. The row is written after the file is complete, so a crash in between leaves a token that matches nothing.
 * A deleted memory's codes must not outlive it on disk (docs/api.md, "Forgetting"): `discard` removes the workspace's
 * files as soon as the delete commits, and the cache saves its current index again (sqlite-vector-cache.ts).
 */
export class SqliteVectorSnapshots {
  private readonly dir: string;
  private readonly versions: SqliteWorkspaceVersions;
  private readonly select;
  private readonly upsert;
  private readonly models;
  private readonly remove;
  private cleaned: Promise<void> | null = null;

  constructor(private readonly db: SqliteDb) {
    this.dir = `${db.name}-vectors`;
    this.versions = new SqliteWorkspaceVersions(db);
    this.select = db.prepare<[string, string, string, string, number], { version: number; token: string }>(
      `SELECT version, token FROM vector_snapshots WHERE tenant_id = ? AND mode = ? AND workspace = ? AND model_id = ? AND dims = ?`);
    this.upsert = db.prepare<[string, string, string, string, number, number, string]>(
      `INSERT OR REPLACE INTO vector_snapshots (tenant_id, mode, workspace, model_id, dims, version, token) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.models = db.prepare<[string, string, string], string>(
      'SELECT model_id FROM vector_snapshots WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck();
    this.remove = db.prepare<[string, string, string]>('DELETE FROM vector_snapshots WHERE tenant_id = ? AND mode = ? AND workspace = ?');
  }

  /** Whether this store can keep snapshots (a file it may write). */
  static usable(db: SqliteDb): boolean {
    return !db.memory && !db.readonly;
  }

  /** The workspace's rows from its snapshot, with the version they reflect; null when there is none still current. */
  async load(scope: Scope, modelId: string, dims: number): Promise<ScopeRows | null> {
    const expected = this.db.transaction(() => {
      const row = this.select.get(scope.tenantId, scope.mode, scope.workspace, modelId, dims);
      return row && row.version === this.versions.of(scope) ? row : null;
    }).deferred();
    if (!expected) return null;
    const read = await readMatrixFile(this.fileOf(scope, modelId), dims, spareRows);
    if (!read || read.header.token !== expected.token || read.header.version !== expected.version) return null;
    return { rows: read.rows, count: read.header.count, version: expected.version };
  }

  /**
   * Saves `matrix` as the snapshot of `version`, which must be the workspace's version now (the caller checks, in the
   * same turn of the event loop). A write applied to the matrix while the file is written moved that version on
   * first (a write reaches the matrix after its COMMIT), so a file that may have caught it half is never used.
   * False when nothing was saved: writes wait to reach the matrix.
   */
  async save(scope: Scope, modelId: string, matrix: VectorMatrix, version: number, signal?: AbortSignal): Promise<boolean> {
    const stored = matrix.storedRows();
    if (!stored) return false;
    const { rows, count } = stored;
    const token = randomUUID();
    this.cleaned ??= this.removeLeftovers();
    await this.cleaned;
    await writeMatrixFile(this.fileOf(scope, modelId), rows, { token, version, dims: matrix.dims, count }, signal);
    this.upsert.run(scope.tenantId, scope.mode, scope.workspace, modelId, matrix.dims, version, token);
    return true;
  }

  /**
   * Removes the workspace's snapshots, every model's, rows and files, at once (synchronously: the delete that calls
   * this answers after its codes left the disk). A file being written meanwhile is removed by the next call, which
   * the cache queues after it.
   */
  discard(scope: Scope): void {
    // The files first: should the rows' delete fail (another process holding the write lock), no code stays on disk.
    for (const modelId of new Set(this.models.all(scope.tenantId, scope.mode, scope.workspace))) {
      rmSync(this.fileOf(scope, modelId), { force: true });
    }
    this.remove.run(scope.tenantId, scope.mode, scope.workspace);
  }

  private fileOf(scope: Scope, modelId: string): string {
    const name = createHash('sha256').update([scope.tenantId, scope.mode, scope.workspace, modelId].join('\u0000')).digest('hex');
    return join(this.dir, `${name.slice(0, 40)}.matrix`);
  }

  /** Makes the directory, and removes the temporary files of writes a crash cut short (another process's still running stay). */
  private async removeLeftovers(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) {
      const pid = /\.(\d+)\.tmp$/.exec(name)?.[1];
      if (pid && !running(Number(pid))) await rm(join(this.dir, name), { force: true });
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
