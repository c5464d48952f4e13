import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { sqlText, tokenizerOf } from './sqlite-query-tokenizer.ts';
import { BM25_COLUMN_WEIGHTS } from '../bm25.ts';

/**
 * What the keyword index holds for a few stored memories: per memory, each of its tokens with its column-weighted
 * frequency (BM25_COLUMN_WEIGHTS). Computed by FTS5 itself, so exactly as `memories_fts` tokenized them: the rows'
 * title, content and tags (the very values the index triggers write) go through a scratch FTS5 table in the
 * connection's temp schema, declared with the same tokenizer, and its fts5vocab. The index's own fts5vocab cannot
 * answer this: it filters on the token only, so reading one memory's tokens would read the whole index.
 */
export class SqliteDocumentTokens {
  private readonly tokensOf: (scope: Scope, seqs: readonly number[]) => Map<number, Map<string, number>>;

  constructor(db: SqliteDb) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_documents USING fts5 (title, content, tags, tokenize = ${sqlText(tokenizerOf(db))});
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_document_tokens USING fts5vocab (temp, keyword_documents, instance);`);
    // By primary key, the scope checked on each row (`+`: not through the scope index, which would walk the scope).
    const load = db.prepare<[string, string, string, string]>(`INSERT INTO temp.keyword_documents (rowid, title, content, tags)
      SELECT m.seq, m.title, m.content, m.tags FROM memories m
      WHERE m.seq IN (SELECT value FROM json_each(?)) AND +m.tenant_id = ? AND +m.mode = ? AND +m.workspace = ?`);
    const read = db.prepare<[], [number, string, string]>('SELECT doc, term, col FROM temp.keyword_document_tokens').raw();
    const clear = db.prepare('DELETE FROM temp.keyword_documents');
    const weights: Readonly<Record<string, number>> = BM25_COLUMN_WEIGHTS;
    this.tokensOf = db.transaction((scope: Scope, seqs: readonly number[]) => {
      load.run(JSON.stringify(seqs), scope.tenantId, scope.mode, scope.workspace);
      const out = new Map<number, Map<string, number>>();
      for (const [doc, term, col] of read.iterate()) {
        let tokens = out.get(doc);
        if (!tokens) out.set(doc, (tokens = new Map()));
        tokens.set(term, (tokens.get(term) ?? 0) + weights[col]!);
      }
      clear.run();
      return out;
    });
  }

  /**
   * Memory seq -> (token -> its column-weighted frequency), for those of `seqs` that are memories of the scope (a
   * memory deleted, or of another scope, is absent).
   */
  of(scope: Scope, seqs: readonly number[]): Map<number, Map<string, number>> {
    return seqs.length === 0 ? new Map() : this.tokensOf(scope, seqs);
  }
}
