import type { Scope } from '../../../core/scope.ts';
import { VectorMatrix } from '../vector-matrix.ts';
import { blobToVector, type SqliteDb } from './sqlite.database.ts';
import { SqliteDataVersion } from './sqlite-data-version.ts';

/**
 * Per-(scope, model) exact vector indexes, loaded from SQLite on first search and kept in step with this
 * process's writes. Writes by another process (another connection) bump SQLite's `data_version`; then every
 * cached index is dropped and reloaded on demand, so a second writer never leaves a stale index behind.
 */
export class SqliteVectorCache {
  private readonly matrices = new Map<string, VectorMatrix>();
  private readonly loadScope;
  private readonly dataVersion;

  constructor(private readonly db: SqliteDb) {
    this.loadScope = db.prepare<[string, string, string, string], { memory_seq: number; dims: number; vector: Buffer }>(
      `SELECT v.memory_seq, v.dims, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq
       WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ? AND v.model_id = ?`,
    );
    this.dataVersion = new SqliteDataVersion(db);
  }

  /** The index for a scope and model, loading it if needed; null when nothing of that model is stored there. */
  get(scope: Scope, modelId: string, dims: number): VectorMatrix {
    if (this.dataVersion.changedElsewhere()) this.matrices.clear();
    const key = cacheKey(scope, modelId);
    let matrix = this.matrices.get(key);
    if (!matrix || matrix.dims !== dims) {
      const rows = this.loadScope.all(scope.tenantId, scope.mode, scope.workspace, modelId);
      matrix = new VectorMatrix(dims, Math.max(1024, rows.length));
      for (const row of rows) if (row.dims === dims) matrix.upsert(row.memory_seq, blobToVector(row.vector));
      this.matrices.set(key, matrix);
    }
    return matrix;
  }

  /** Called after a committed write of this process. */
  upsert(scope: Scope, modelId: string, seq: number, vector: Float32Array): void {
    // A vector of another model replaces the old one: drop the seq from every model's index of this scope.
    this.remove(scope, seq);
    const matrix = this.matrices.get(cacheKey(scope, modelId));
    if (matrix && matrix.dims === vector.length) matrix.upsert(seq, vector);
    else if (matrix) this.matrices.delete(cacheKey(scope, modelId));
  }

  remove(scope: Scope, seq: number): void {
    const prefix = scopePrefix(scope);
    for (const [key, matrix] of this.matrices) if (key.startsWith(prefix)) matrix.remove(seq);
  }

  clear(): void {
    this.matrices.clear();
  }
}

const scopePrefix = (s: Scope): string => `${s.tenantId}\u0000${s.mode}\u0000${s.workspace}\u0000`;
const cacheKey = (s: Scope, modelId: string): string => scopePrefix(s) + modelId;
