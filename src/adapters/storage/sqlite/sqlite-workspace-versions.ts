import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';

/**
 * Reads a workspace's version (migration 15): triggers move it on with every write that changes what a search cache
 * holds for that workspace, from any connection. One primary-key lookup, cheap enough to check before every search.
 * A cache stays valid while the version is the one it last saw, or moved on only by this process's own writes (read
 * inside their transaction: see SqliteVectorCache.noteWrite).
 */
export class SqliteWorkspaceVersions {
  private readonly read;

  constructor(db: SqliteDb) {
    this.read = db.prepare<[string, string, string], number>(
      'SELECT version FROM workspace_versions WHERE tenant_id = ? AND mode = ? AND workspace = ?').pluck();
  }

  of(scope: Scope): number {
    return this.read.get(scope.tenantId, scope.mode, scope.workspace) ?? 0;
  }
}
