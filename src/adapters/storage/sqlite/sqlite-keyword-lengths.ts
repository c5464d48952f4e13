import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { SqliteDataVersion } from './sqlite-data-version.ts';

/** A scope's memories and their lengths in keyword-index tokens (all columns): BM25's N and average length. */
export interface ScopeLengths {
  readonly bySeq: ReadonlyMap<number, number>;
  readonly totalTokens: number;
}

interface MutableScopeLengths {
  bySeq: Map<number, number>;
  totalTokens: number;
}

/**
 * Per-scope document lengths for keyword ranking, read from the keyword index's own per-row token counts
 * (`memories_fts_docsize`), loaded on a scope's first keyword search and kept in step with this process's writes;
 * dropped when another process wrote (as the vector cache is).
 */
export class SqliteKeywordLengths {
  private readonly scopes = new Map<string, MutableScopeLengths>();
  private readonly loadScope;
  private readonly lengthOf;
  private readonly dataVersion;

  constructor(db: SqliteDb) {
    this.loadScope = db.prepare<[string, string, string], [number, Buffer]>(
      `SELECT m.seq, d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.seq
       WHERE m.tenant_id = ? AND m.mode = ? AND m.workspace = ?`).raw();
    this.lengthOf = db.prepare<[number], Buffer>('SELECT sz FROM memories_fts_docsize WHERE id = ?').pluck();
    this.dataVersion = new SqliteDataVersion(db);
  }

  get(scope: Scope): ScopeLengths {
    if (this.dataVersion.changedElsewhere()) this.scopes.clear();
    const key = scopeKey(scope);
    let lengths = this.scopes.get(key);
    if (!lengths) {
      lengths = { bySeq: new Map(), totalTokens: 0 };
      for (const [seq, sz] of this.loadScope.iterate(scope.tenantId, scope.mode, scope.workspace)) {
        const tokens = tokensInDocsize(sz);
        lengths.bySeq.set(seq, tokens);
        lengths.totalTokens += tokens;
      }
      this.scopes.set(key, lengths);
    }
    return lengths;
  }

  /** Called after this process committed an insert or an update of the memory `seq`. */
  refresh(scope: Scope, seq: number): void {
    const lengths = this.scopes.get(scopeKey(scope));
    if (!lengths) return;
    const sz = this.lengthOf.get(seq);
    if (sz === undefined) {
      this.remove(scope, seq);
      return;
    }
    const tokens = tokensInDocsize(sz);
    lengths.totalTokens += tokens - (lengths.bySeq.get(seq) ?? 0);
    lengths.bySeq.set(seq, tokens);
  }

  /** Called after this process committed the deletion of the memory `seq`. */
  remove(scope: Scope, seq: number): void {
    const lengths = this.scopes.get(scopeKey(scope));
    const tokens = lengths?.bySeq.get(seq);
    if (!lengths || tokens === undefined) return;
    lengths.totalTokens -= tokens;
    lengths.bySeq.delete(seq);
  }
}

/**
 * The row's length in tokens: FTS5 stores one SQLite varint per column (7 bits a byte, most significant first, high
 * bit set on every byte but the last) in `%_docsize.sz`, part of its on-disk format.
 */
export function tokensInDocsize(sz: Buffer): number {
  let total = 0;
  let value = 0;
  for (const byte of sz) {
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) {
      total += value;
      value = 0;
    }
  }
  return total;
}

const scopeKey = (s: Scope): string => `${s.tenantId}\u0000${s.mode}\u0000${s.workspace}`;
