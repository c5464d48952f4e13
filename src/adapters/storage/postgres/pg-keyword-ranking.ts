import { hasMemoryFilter, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { pgInt, SqlParams, type PgQueryable } from './pg-executor.ts';
import { filterSql, scopeSql, validAtSql } from './pg-memory-filter.ts';
import { BM25_COLUMN_WEIGHTS, capFrequencies, rankBm25, type RankedKeywordHit } from '../bm25.ts';

/** The text search configuration of `memories.keywords` (stemming, stop words): queries must use the same. */
export const TEXT_SEARCH_CONFIG = 'english';
/** BM25 column weights by tsvector weight label: title (A), content (B), tags (C). */
export const WEIGHTS: Readonly<Record<string, number>> = {
  A: BM25_COLUMN_WEIGHTS.title, B: BM25_COLUMN_WEIGHTS.content, C: BM25_COLUMN_WEIGHTS.tags, D: 1.0,
};

/** A query word as index tokens, each with its offset from the first (stop words leave gaps). */
export type Phrase = { lexeme: string; offset: number }[];

/** A token of query word `ord` (1-based) as `to_tsvector` gives it: its lexeme at one of its positions. */
export type QueryTokens = Map<number, { lexeme: string; position: number }[]>;

/** The query tokens: (ord, lexeme, positions) rows of the words in the text[] parameter `wordList`. */
export const queryTokensSql = (wordList: string): string => `SELECT w.ord, k.lexeme, k.positions
      FROM unnest(${wordList}::text[]) WITH ORDINALITY AS w(word, ord), unnest(to_tsvector('${TEXT_SEARCH_CONFIG}', w.word)) k`;

/** Each word as its tokens in position order, by word order (`ords`); words without any (stop words only) are dropped. */
export function phrasesOf(tokensOf: QueryTokens): { ords: number[]; phrases: Phrase[] } {
  const ords = [...tokensOf.keys()].sort((a, b) => a - b);
  const phrases: Phrase[] = ords.map((ord) => {
    const tokens = tokensOf.get(ord)!.sort((a, b) => a.position - b.position);
    return tokens.map((t) => ({ lexeme: t.lexeme, offset: t.position - tokens[0]!.position }));
  });
  return { ords, phrases };
}

/** Per phrase: its (capped) frequencies, how many memories of the scope hold it, and how many of those the search keeps. */
export interface PhraseCounts { frequencies: Map<number, number>; holding: number; kept: number }

/** BM25 over the phrases' counts, as both PostgreSQL rankings (in SQL, in memory) finish. */
export function rankPhrases(perPhrase: readonly PhraseCounts[], o: {
  wanted: (seq: number) => boolean; lengthOf: (seq: number) => number; documents: number; totalLength: number;
  limit: number; cap: number; filter: MemoryFilter;
}): { hits: RankedKeywordHit[]; total: number } {
  const frequencies = perPhrase.map((x) => x.frequencies);
  const held = new Set<number>();
  for (const f of frequencies) for (const seq of f.keys()) held.add(seq);
  return rankBm25({
    frequencies, holding: perPhrase.map((x) => x.holding), candidates: [...held].filter(o.wanted), lengthOf: o.lengthOf,
    documents: o.documents, averageLength: o.documents > 0 ? o.totalLength / o.documents : 0, limit: o.limit,
    totalAtLeast: totalAtLeast(perPhrase, o.cap, o.filter),
  });
}

/**
 * The least `total` can be beside the candidates counted: without a filter but validity, a capped word's memories
 * valid then are all matches, so `total` is at least their count.
 */
export function totalAtLeast(perPhrase: readonly { holding: number; kept: number }[], cap: number, filter: MemoryFilter): number {
  return perPhrase.some((x) => x.holding > cap) && !hasMemoryFilter(filter) ? Math.max(...perPhrase.map((x) => x.kept)) : 0;
}

/** A token `t.lexeme` quoted for tsquery input, in SQL: backslashes and quotes doubled, in single quotes. */
const QUOTED_LEXEME = String.raw`'''' || replace(replace(t.lexeme, '\', '\\'), '''', '''''') || ''''`;

/** A row of the ranking's one statement; `kind` says which columns it fills. */
interface RankingRow {
  /** t: a token of word `ord`; w: single-token word `ord`'s holders; o: a candidate's occurrences of a lexeme; s: the scope's N and total length. */
  kind: 't' | 'w' | 'o' | 's';
  ord: number | string | null; seq: number | string | null; n: number | string | null; kept: number | string | null;
  total: number | null; wanted: boolean | null; lexeme: string | null; positions: number[] | null; weights: string[] | null;
  seqs: (number | string)[] | null;
}

/**
 * BM25 whose corpus statistics (N, average length, document frequencies) are the caller's scope's own and live, so
 * no other tenant, mode or workspace can move a score: ts_rank / ts_rank_cd use no corpus statistics at all, so they
 * cannot give BM25's ordering, and the contract asks for scores that follow the scope's statistics. One statement
 * (one round trip) tokenizes the words with the index's configuration, finds the candidates through the GIN index on
 * `keywords`, reads their occurrences (positions and weights, from unnest(tsvector)) and the scope's N and total
 * length (`memory_keyword_stats`, kept by triggers). The candidate cap is applied before any occurrence is read: per
 * single-token word, the `cap` newest memories of the scope holding it and the count of all of them (its document
 * frequency), from one pass over its holders; a word the parser splits (a phrase, rare) reads every memory holding
 * all its tokens, then is capped the same way. Positions beyond tsvector's limits (16383, 256 per lexeme) are not
 * counted.
 */
export async function rankKeywords(db: PgQueryable, scope: Scope, words: readonly string[], filter: MemoryFilter,
  limit: number, cap: number): Promise<{ hits: RankedKeywordHit[]; total: number }> {
  if (words.length === 0) return { hits: [], total: 0 };
  const p = new SqlParams();
  const wordList = p.add(words);
  const where = scopeSql(p, scope);
  // Validity leaves memories out of the candidates, never out of the corpus statistics: `kept` counts holders valid then.
  const valid = filter.validAt ? validAtSql(p, filter.validAt) : 'TRUE';
  const capped = p.add(Math.min(cap, 2 ** 31 - 1));
  const filterClause = filterSql(p, filter);
  const statsWhere = scopeSql(p, scope, 's');
  const rows = await db.query<RankingRow>(`WITH tokens AS MATERIALIZED (
      ${queryTokensSql(wordList)}
    ), words AS MATERIALIZED (
      SELECT t.ord, SUM(cardinality(t.positions)) AS tokens, '(' || string_agg(${QUOTED_LEXEME}, ' & ') || ')' AS q
      FROM tokens t GROUP BY t.ord
    ), holders AS MATERIALIZED (
      SELECT w.ord, m.seq, ${valid} AS valid FROM words w JOIN memories m ON m.keywords @@ w.q::tsquery
      WHERE w.tokens = 1 AND ${where}
    ), counted AS MATERIALIZED (
      SELECT h.ord, COUNT(*) AS holding, COUNT(*) FILTER (WHERE h.valid) AS kept,
        (array_agg(h.seq ORDER BY h.seq DESC))[1:${capped}::int] AS seqs
      FROM holders h GROUP BY h.ord
    )
    SELECT 't' AS kind, t.ord, NULL::bigint AS seq, NULL::bigint AS n, NULL::bigint AS kept, NULL::float8 AS total,
      NULL::boolean AS wanted, t.lexeme, t.positions, NULL::text[] AS weights, NULL::bigint[] AS seqs FROM tokens t
    UNION ALL
    SELECT 'w', c.ord, NULL, c.holding, c.kept, NULL, NULL, NULL, NULL, NULL, c.seqs FROM counted c
    UNION ALL
    SELECT 'o', NULL, m.seq, m.keyword_length, NULL, NULL, (TRUE${filterClause}), k.lexeme, k.positions, k.weights, NULL
    FROM memories m, unnest(m.keywords) k
    WHERE ${where}
      AND (m.seq = ANY(ARRAY(SELECT DISTINCT s.seq FROM counted c, unnest(c.seqs) AS s(seq)))
        OR m.keywords @@ (SELECT string_agg(w.q, ' | ')::tsquery FROM words w WHERE w.tokens > 1))
      AND k.lexeme IN (SELECT t.lexeme FROM tokens t)
    UNION ALL
    SELECT 's', NULL, NULL, SUM(s.documents)::bigint, NULL, COALESCE(SUM(s.total_length), 0)::float8, NULL, NULL, NULL, NULL, NULL
    FROM memory_keyword_stats s WHERE ${statsWhere}`, p.values);

  const tokensOf: QueryTokens = new Map();
  const holdersByOrd = new Map<number, { seqs: Set<number>; holding: number; kept: number }>();
  const occurrences: RankingRow[] = [];
  let stats = { n: 0, total: 0 };
  for (const r of rows) {
    if (r.kind === 't') {
      const tokens = tokensOf.get(pgInt(r.ord)) ?? [];
      for (const position of r.positions!) tokens.push({ lexeme: r.lexeme!, position });
      tokensOf.set(pgInt(r.ord), tokens);
    } else if (r.kind === 'w') {
      holdersByOrd.set(pgInt(r.ord), { seqs: new Set(r.seqs!.map(pgInt)), holding: pgInt(r.n), kept: pgInt(r.kept) });
    } else if (r.kind === 'o') {
      occurrences.push(r);
    } else {
      stats = { n: pgInt(r.n ?? 0), total: r.total ?? 0 };
    }
  }
  const { ords, phrases } = phrasesOf(tokensOf);
  if (phrases.length === 0) return { hits: [], total: 0 };
  const single = phrases.map((ph) => ph.length === 1);
  // A single-token word no memory of the scope holds has no holders row.
  const holdersOf = (i: number) => holdersByOrd.get(ords[i]!) ?? { seqs: new Set<number>(), holding: 0, kept: 0 };

  // Per memory: its length, whether the filter keeps it, and lexeme -> (position -> weight label).
  const docs = new Map<number, { length: number; wanted: boolean; occurrences: Map<string, Map<number, string>> }>();
  for (const r of occurrences) {
    const seq = pgInt(r.seq);
    let doc = docs.get(seq);
    if (!doc) docs.set(seq, (doc = { length: pgInt(r.n), wanted: r.wanted!, occurrences: new Map() }));
    doc.occurrences.set(r.lexeme!, new Map(r.positions!.map((pos, i) => [pos, r.weights![i] ?? 'D'])));
  }
  // Per phrase, its weighted frequency in each memory read that holds it; a phrase must stay within one column (one
  // weight). A single token counts only in its own newest memories (others were read for another word).
  const perPhrase = phrases.map((phrase, i): PhraseCounts => {
    const own = single[i] ? holdersOf(i) : null;
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
  return rankPhrases(perPhrase, {
    wanted: (seq) => docs.get(seq)!.wanted, lengthOf: (seq) => docs.get(seq)!.length,
    documents: stats.n, totalLength: stats.total, limit, cap, filter,
  });
}
