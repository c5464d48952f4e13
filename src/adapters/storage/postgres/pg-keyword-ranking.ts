import { hasMemoryFilter, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { pgInt, SqlParams, type PgQueryable } from './pg-executor.ts';
import { filterSql, scopeSql, validAtSql } from './pg-memory-filter.ts';
import { BM25_COLUMN_WEIGHTS, capFrequencies, rankBm25, type RankedKeywordHit } from '../bm25.ts';

/** The text search configuration of `memories.keywords` (stemming, stop words): queries must use the same. */
export const TEXT_SEARCH_CONFIG = 'english';
/** BM25 column weights by tsvector weight label: title (A), content (B), tags (C). */
const WEIGHTS: Readonly<Record<string, number>> = {
  A: BM25_COLUMN_WEIGHTS.title, B: BM25_COLUMN_WEIGHTS.content, C: BM25_COLUMN_WEIGHTS.tags, D: 1.0,
};

/** A query word as index tokens, each with its offset from the first (stop words leave gaps). */
type Phrase = { lexeme: string; offset: number }[];

interface OccurrenceRow {
  seq: number | string; keyword_length: number; wanted: boolean; lexeme: string; positions: number[]; weights: string[];
}

/** A lexeme quoted for tsquery input. */
const quoteLexeme = (lexeme: string): string => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/**
 * BM25 whose corpus statistics (N, average length, document frequencies) are the caller's scope's own and live, so
 * no other tenant, mode or workspace can move a score: ts_rank / ts_rank_cd use no corpus statistics at all, so they
 * cannot give BM25's ordering, and the contract asks for scores that follow the scope's statistics. The GIN index on
 * `keywords` finds the candidates; their occurrences (positions and weights) come from unnest(tsvector), and the
 * scope's N and total length from `keyword_length`. The candidate cap is applied in SQL before any occurrence is
 * read: per single-token word, the `cap` newest memories of the scope holding it (`ORDER BY seq DESC LIMIT cap`) and
 * a count of all of them (its document frequency); a word the parser splits (a phrase, rare) reads every memory
 * holding all its tokens, then is capped the same way. Positions beyond tsvector's limits (16383, 256 per lexeme)
 * are not counted.
 */
export async function rankKeywords(db: PgQueryable, scope: Scope, words: readonly string[], filter: MemoryFilter,
  limit: number, cap: number): Promise<{ hits: RankedKeywordHit[]; total: number }> {
  const phrases = await tokenize(db, words);
  if (phrases.length === 0) return { hits: [], total: 0 };
  const lexemes = [...new Set(phrases.flatMap((ph) => ph.map((t) => t.lexeme)))];
  const tsquery = (ph: Phrase) => `(${ph.map((t) => quoteLexeme(t.lexeme)).join(' & ')})`;
  const single = phrases.map((ph) => ph.length === 1);

  // Single-token words: the newest `cap` memories of the scope holding the token, how many hold it, and how many of
  // those are valid at `filter.validAt` (as a filter: validity leaves memories out of the candidates, never out of the
  // corpus statistics).
  const singles = phrases.filter((_, i) => single[i]).map(tsquery);
  const newest = new Map<number, { seqs: Set<number>; holding: number; kept: number }>();
  if (singles.length > 0) {
    const p = new SqlParams();
    const inScope = `${scopeSql(p, scope)} AND m.keywords @@ w.q::tsquery`;
    const kept = filter.validAt ? `COUNT(*) FILTER (WHERE ${validAtSql(p, filter.validAt)})` : 'COUNT(*)';
    const rows = await db.query<{ ord: number | string; holding: number | string; kept: number | string; seqs: (number | string)[] }>(
      `SELECT w.ord, c.holding, c.kept,
         ARRAY(SELECT m.seq FROM memories m WHERE ${inScope} ORDER BY m.seq DESC LIMIT ${p.add(Math.min(cap, Number.MAX_SAFE_INTEGER))}::bigint) AS seqs
       FROM unnest(${p.add(singles)}::text[]) WITH ORDINALITY AS w(q, ord),
         LATERAL (SELECT COUNT(*) AS holding, ${kept} AS kept FROM memories m WHERE ${inScope}) c`, p.values);
    for (const r of rows) {
      newest.set(pgInt(r.ord) - 1, { seqs: new Set(r.seqs.map(pgInt)), holding: pgInt(r.holding), kept: pgInt(r.kept) });
    }
  }
  const singleIndex = phrases.map((_, i) => single.slice(0, i).filter(Boolean).length);
  const candidateSeqs = [...new Set([...newest.values()].flatMap((n) => [...n.seqs]))];
  const multi = phrases.filter((_, i) => !single[i]).map(tsquery).join(' | ');

  const p = new SqlParams();
  const where = scopeSql(p, scope);
  const which = [
    ...(candidateSeqs.length > 0 ? [`m.seq = ANY(${p.add(candidateSeqs)}::bigint[])`] : []),
    ...(multi ? [`m.keywords @@ ${p.add(multi)}::tsquery`] : []),
  ];
  const lexemeList = p.add(lexemes);
  const filterClause = filterSql(p, filter);
  const rows = which.length === 0 ? [] : await db.query<OccurrenceRow>(
    `SELECT m.seq, m.keyword_length, (TRUE${filterClause}) AS wanted, k.lexeme, k.positions, k.weights
     FROM memories m, unnest(m.keywords) k
     WHERE ${where} AND (${which.join(' OR ')}) AND k.lexeme = ANY(${lexemeList}::text[])`, p.values);
  const sp = new SqlParams();
  const [stats] = await db.query<{ n: number; total: number }>(
    `SELECT COUNT(*)::int AS n, COALESCE(SUM(m.keyword_length), 0)::float8 AS total FROM memories m WHERE ${scopeSql(sp, scope)}`,
    sp.values);

  // Per memory: its length, whether the filter keeps it, and lexeme -> (position -> weight label).
  const docs = new Map<number, { length: number; wanted: boolean; occurrences: Map<string, Map<number, string>> }>();
  for (const r of rows) {
    const seq = pgInt(r.seq);
    let doc = docs.get(seq);
    if (!doc) docs.set(seq, (doc = { length: r.keyword_length, wanted: r.wanted, occurrences: new Map() }));
    doc.occurrences.set(r.lexeme, new Map(r.positions.map((pos, i) => [pos, r.weights[i] ?? 'D'])));
  }
  // Per phrase, its weighted frequency in each memory read that holds it; a phrase must stay within one column (one
  // weight). A single token counts only in its own newest memories (others were read for another word).
  const perPhrase = phrases.map((phrase, i) => {
    const own = single[i] ? newest.get(singleIndex[i]!)! : null;
    const out = new Map<number, number>();
    for (const [seq, doc] of docs) {
      if (own && !own.seqs.has(seq)) continue;
      const first = doc.occurrences.get(phrase[0]!.lexeme);
      if (!first) continue;
      let tf = 0;
      for (const [pos, weight] of first) {
        if (phrase.every((t) => doc.occurrences.get(t.lexeme)?.get(pos + t.offset) === weight)) tf += WEIGHTS[weight] ?? 1;
      }
      if (tf > 0) out.set(seq, tf);
    }
    if (own) return { frequencies: out, holding: own.holding, kept: own.kept };
    // A phrase: every memory holding it was read; the same cap as a token's (its newest `cap`), applied here.
    return { ...capFrequencies(out, cap), kept: [...out.keys()].filter((seq) => docs.get(seq)!.wanted).length };
  });

  const frequencies = perPhrase.map((x) => x.frequencies);
  const holding = perPhrase.map((x) => x.holding);
  // Without a filter but validity, a capped word's memories valid then are all matches: `total` is at least their count.
  const kept = perPhrase.map((x) => x.kept);
  const documents = stats!.n;
  const candidates = [...docs].filter(([seq, doc]) => doc.wanted && frequencies.some((f) => f.has(seq))).map(([seq]) => seq);
  return rankBm25({
    frequencies, holding, candidates, lengthOf: (seq) => docs.get(seq)!.length,
    documents, averageLength: documents > 0 ? stats!.total / documents : 0, limit,
    totalAtLeast: holding.some((n) => n > cap) && !hasMemoryFilter(filter) ? Math.max(...kept) : 0,
  });
}

/** Each word as the index's tokens (to_tsvector with the index's configuration); words without any are dropped. */
async function tokenize(db: PgQueryable, words: readonly string[]): Promise<Phrase[]> {
  if (words.length === 0) return [];
  const rows = await db.query<{ ord: number | string; lexeme: string; positions: number[] }>(
    `SELECT w.ord, k.lexeme, k.positions FROM unnest($1::text[]) WITH ORDINALITY AS w(word, ord),
     unnest(to_tsvector('${TEXT_SEARCH_CONFIG}', w.word)) k`, [words]);
  const byWord = new Map<number, { lexeme: string; position: number }[]>();
  for (const r of rows) {
    const tokens = byWord.get(pgInt(r.ord)) ?? [];
    for (const position of r.positions) tokens.push({ lexeme: r.lexeme, position });
    byWord.set(pgInt(r.ord), tokens);
  }
  return [...byWord.keys()].sort((a, b) => a - b).map((ord) => {
    const tokens = byWord.get(ord)!.sort((a, b) => a.position - b.position);
    return tokens.map((t) => ({ lexeme: t.lexeme, offset: t.position - tokens[0]!.position }));
  });
}
