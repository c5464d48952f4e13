import type { SqliteDb } from './sqlite.database.ts';

/** Words whose tokens are remembered; past that the memory starts again. */
const KNOWN_WORDS_MAX = 10_000;

/**
 * Query words turned into the keyword index's own tokens (stemmed, case- and diacritic-folded), by FTS5 itself: a
 * scratch FTS5 table in the connection's temp schema, declared with the same tokenizer as `memories_fts`, and its
 * fts5vocab. A word the tokenizer splits into several tokens becomes a phrase, as in an FTS5 `MATCH "word"`.
 */
export class SqliteQueryTokenizer {
  private readonly tokenize: (words: readonly string[]) => string[][];
  /** Words already tokenized (the tokenizer is fixed for the index's life): a query's words are mostly repeats. */
  private readonly known = new Map<string, readonly string[]>();

  constructor(db: SqliteDb) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_query USING fts5 (word, tokenize = ${sqlText(tokenizerOf(db))});
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_query_tokens USING fts5vocab (temp, keyword_query, instance);`);
    const insert = db.prepare('INSERT INTO temp.keyword_query (rowid, word) VALUES (?, ?)');
    const read = db.prepare<[], { doc: number; term: string }>(
      'SELECT doc, term FROM temp.keyword_query_tokens ORDER BY doc, offset');
    const clear = db.prepare('DELETE FROM temp.keyword_query');
    this.tokenize = db.transaction((words: readonly string[]) => {
      words.forEach((w, i) => insert.run(i + 1, w));
      const phrases = words.map((): string[] => []);
      for (const { doc, term } of read.all()) phrases[doc - 1]!.push(term);
      clear.run();
      return phrases;
    });
  }

  /** One token list per word, in order (empty when the word holds no token character). */
  phrases(words: readonly string[]): string[][] {
    const missing = words.filter((w) => !this.known.has(w));
    if (missing.length > 0) {
      if (this.known.size + missing.length > KNOWN_WORDS_MAX) this.known.clear();
      this.tokenize(missing).forEach((tokens, i) => this.known.set(missing[i]!, tokens));
    }
    return words.map((w) => [...this.known.get(w)!]);
  }
}

/** The `tokenize` option `memories_fts` was created with (FTS5's default when none was given). */
export function tokenizerOf(db: SqliteDb): string {
  const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'memories_fts'").pluck().get();
  if (typeof sql !== 'string') throw new Error('the keyword index memories_fts is missing');
  const option = /tokenize\s*=\s*'((?:[^']|'')*)'/i.exec(sql);
  return option ? option[1]!.replaceAll("''", "'") : 'unicode61';
}

export const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`;
