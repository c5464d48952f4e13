import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import type { ScopeLengths, SqliteKeywordLengths } from './sqlite-keyword-lengths.ts';
import { SqliteQueryTokenizer } from './sqlite-query-tokenizer.ts';
import { BM25_COLUMN_WEIGHTS, capFrequencies, rankBm25, type RankedKeywordHit } from '../bm25.ts';

/** BM25 column weights, in the index's column order. */
const COLUMN_WEIGHTS: readonly (readonly [string, number])[] = Object.entries(BM25_COLUMN_WEIGHTS);

/** Restricts candidates further; `sql` is ` AND …` over the memories alias `m`. */
export interface CandidateFilter {
  sql: string;
  params: unknown[];
}

/**
 * Keyword ranking whose corpus statistics come from the caller's scope alone, so that no other tenant, mode or
 * workspace can move a score: FTS5's bm25() formula (same k1, b, idf and column weights), but with N, the average
 * length and each term's document frequency counted over the scope's memories instead of the whole index.
 * Occurrences come from the index (fts5vocab `instance`), lengths from {@link SqliteKeywordLengths}.
 */
export class SqliteKeywordRanking {
  private readonly tokenizer: SqliteQueryTokenizer;
  private readonly occurrencesOf;
  private readonly positionsOf;

  constructor(private readonly db: SqliteDb, private readonly lengths: SqliteKeywordLengths) {
    this.tokenizer = new SqliteQueryTokenizer(db);
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances USING fts5vocab (main, memories_fts, instance)');
    const column = `CASE col ${COLUMN_WEIGHTS.map(([name], i) => `WHEN '${name}' THEN ${i}`).join(' ')} END`;
    // One JSON array per token rather than a row per occurrence: a common word occurs tens of thousands of times.
    this.occurrencesOf = db.prepare<[string], string>(
      `SELECT json_group_array(doc * ${COLUMN_WEIGHTS.length} + ${column}) FROM temp.memories_fts_instances WHERE term = ?`).pluck();
    this.positionsOf = db.prepare<[string], string>(
      `SELECT json_group_array(json_array(doc, ${column}, offset)) FROM temp.memories_fts_instances WHERE term = ?`).pluck();
  }

  /**
   * The `limit` best memories of the scope matching any of the words (best first), and how many match in all. Per
   * word, only its `cap` newest memories of the scope are scored (its document frequency is still counted exactly);
   * when a word was capped and nothing filters, `total` is at least that word's document count.
   */
  rank(scope: Scope, words: readonly string[], filter: CandidateFilter | null, limit: number, cap: number):
    { hits: RankedKeywordHit[]; total: number } {
    const phrases = this.tokenizer.phrases(words).filter((tokens) => tokens.length > 0);
    if (phrases.length === 0) return { hits: [], total: 0 };
    const scopeLengths = this.lengths.get(scope);
    const occurrences = new Map<string, number[]>();
    // Per phrase, its weighted frequency in each (capped) memory of the scope that holds it, and how many hold it.
    const perPhrase = phrases.map((tokens) => this.weightedFrequencies(tokens, scopeLengths, occurrences, cap));
    const frequencies = perPhrase.map((p) => p.frequencies);
    const holding = perPhrase.map((p) => p.holding);
    let candidates = new Set(frequencies.flatMap((f) => [...f.keys()]));
    if (filter && candidates.size > 0) {
      candidates = new Set(this.db.prepare<unknown[], number>(
        `SELECT m.seq FROM memories m WHERE m.seq IN (SELECT value FROM json_each(?))${filter.sql}`,
      ).pluck().all(JSON.stringify([...candidates]), ...filter.params));
    }

    const documents = scopeLengths.bySeq.size;
    return rankBm25({
      frequencies, holding, candidates, lengthOf: (seq) => scopeLengths.bySeq.get(seq)!,
      documents, averageLength: scopeLengths.totalTokens / documents, limit,
      totalAtLeast: filter ? 0 : Math.max(...holding),
    });
  }

  /**
   * Memory seq -> Σ over the phrase's occurrences of its column's weight, for the `cap` newest memories of the scope
   * holding the phrase; `holding` counts all of them.
   */
  private weightedFrequencies(tokens: readonly string[], scope: ScopeLengths, cache: Map<string, number[]>, cap: number):
    { frequencies: Map<number, number>; holding: number } {
    const out = new Map<number, number>();
    let holding = 0;
    if (tokens.length === 1) {
      // Occurrences come ordered by memory seq: walked from the newest, a memory past the cap is only counted.
      const n = COLUMN_WEIGHTS.length;
      const codes = this.occurrences(tokens[0]!, cache);
      let doc = -1;
      let kept = false;
      for (let i = codes.length - 1; i >= 0; i--) {
        const code = codes[i]!;
        const d = Math.floor(code / n);
        if (d !== doc) {
          doc = d;
          kept = scope.bySeq.has(d) && ++holding <= cap;
        }
        if (kept) out.set(d, (out.get(d) ?? 0) + COLUMN_WEIGHTS[code % n]![1]);
      }
      return { frequencies: out, holding };
    }
    // A phrase occurs where its first token does and each next token follows right after, in the same column.
    const starts = tokens.map((token, i) => new Set(this.positions(token).map(([doc, column, offset]) =>
      `${doc},${column},${offset - i}`)));
    for (const start of starts[0]!) {
      if (starts.every((s) => s.has(start))) {
        const [doc, column] = start.split(',').map(Number);
        if (scope.bySeq.has(doc!)) out.set(doc!, (out.get(doc!) ?? 0) + COLUMN_WEIGHTS[column!]![1]);
      }
    }
    const capped = capFrequencies([out], cap);
    return { frequencies: capped.frequencies[0]!, holding: capped.holding[0]! };
  }

  private occurrences(token: string, cache: Map<string, number[]>): number[] {
    let codes = cache.get(token);
    if (!codes) cache.set(token, (codes = JSON.parse(this.occurrencesOf.get(token)!) as number[]));
    return codes;
  }

  private positions(token: string): [number, number, number][] {
    return JSON.parse(this.positionsOf.get(token)!) as [number, number, number][];
  }
}
