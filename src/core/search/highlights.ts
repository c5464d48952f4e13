import { wordsOf } from './query-terms.ts';

/**
 * Highlights: up to `maxSnippets` snippets of about `width` characters around the query's words in a text, each
 * matched word wrapped in `<mark>…</mark>`. The rest of the snippet is HTML-escaped, so a snippet is safe to render
 * as HTML. A word matches a query term when one starts with the other (`deploy` ~ `deployment`), which roughly
 * follows the keyword index's stemming.
 */
export interface HighlightOptions {
  maxSnippets?: number;
  width?: number;
}

/** Most snippets have nothing to escape or collapse: testing first spares a copy of each. */
const NEEDS_ESCAPE = /[&<>"']/;
const escapeHtml = (s: string): string => (NEEDS_ESCAPE.test(s) ? s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) : s);
/** Whitespace other than single spaces. */
const LOOSE_SPACE = /[^\S ]| {2}/;
const collapseSpaces = (s: string): string => (LOOSE_SPACE.test(s) ? s.replace(/\s+/g, ' ') : s).trim();

/** The query's terms and the first letters they start with; a search highlights its hits with one query. */
let lastQuery: { query: string; terms: string[]; initials: Set<number> } | null = null;

function termsOf(query: string): { terms: string[]; initials: Set<number> } {
  if (lastQuery?.query !== query) {
    const terms = [...new Set(wordsOf(query))].filter((t) => t.length >= 2);
    lastQuery = { query, terms, initials: new Set(terms.map((t) => t.charCodeAt(0))) };
  }
  return lastQuery;
}

/** A word is a run of letters and digits (Unicode's L and N), as `wordsOf` reads them. */
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
/** Which ASCII characters are letters or digits: most text is ASCII, and a table answers without a regex. */
const ASCII_WORD = Uint8Array.from({ length: 128 }, (_, c) => (WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 0));

/** How many UTF-16 units the letter or digit at `i` takes (a character beyond the BMP takes 2); 0 for any other. */
function wordCharWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return ASCII_WORD[c]!;
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return WORD_CHAR.test(text.slice(i, i + 2)) ? 2 : 0;
  }
  return WORD_CHAR.test(text[i]!) ? 1 : 0;
}

/**
 * Calls `visit` with the bounds of each word of the text, in order: a scan of char codes rather than a regex match per
 * word, which allocated a match for each of a memory's hundred words when only a few can match.
 */
function forEachWord(text: string, visit: (start: number, end: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let width = wordCharWidth(text, i);
    if (width === 0) {
      i++;
      continue;
    }
    const start = i;
    do i += width; while (i < n && (width = wordCharWidth(text, i)) > 0);
    visit(start, i);
  }
}

/** The first UTF-16 unit of the word's lowercase form (that of its first letter, for an ASCII one). */
function lowerInitial(text: string, start: number, end: number): number {
  const c = text.charCodeAt(start);
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c;
  return text.slice(start, end).toLowerCase().charCodeAt(0);
}

export function highlight(text: string, query: string, options: HighlightOptions = {}): string[] {
  const maxSnippets = options.maxSnippets ?? 3;
  const width = options.width ?? 160;
  const { terms, initials } = termsOf(query);
  if (terms.length === 0 || text.length === 0) return [];
  // Positions of matching words in the original text. A word and a term match only if one starts with the other (in
  // lowercase), so only a word whose first letter starts a term can.
  const hits: { start: number; end: number }[] = [];
  forEachWord(text, (start, end) => {
    if (!initials.has(lowerInitial(text, start, end))) return;
    const w = text.slice(start, end).toLowerCase();
    if (terms.some((t) => (w.length >= 3 && t.startsWith(w)) || w.startsWith(t))) hits.push({ start, end });
  });
  if (hits.length === 0) return [];

  const snippets: string[] = [];
  let i = 0;
  while (i < hits.length && snippets.length < maxSnippets) {
    const first = hits[i]!;
    let from = Math.max(0, first.start - Math.floor(width / 3));
    // Start on a word boundary.
    if (from > 0) {
      const space = text.lastIndexOf(' ', first.start);
      from = space >= from ? space + 1 : from;
    }
    let to = Math.min(text.length, Math.max(from + width, first.end));
    if (to < text.length) {
      const space = text.lastIndexOf(' ', to);
      if (space > first.end) to = space;
    }
    let out = from > 0 ? '…' : '';
    let cursor = from;
    while (i < hits.length && hits[i]!.end <= to) {
      const h = hits[i]!;
      out += `${escapeHtml(text.slice(cursor, h.start))}<mark>${escapeHtml(text.slice(h.start, h.end))}</mark>`;
      cursor = h.end;
      i++;
    }
    out += escapeHtml(text.slice(cursor, to)) + (to < text.length ? '…' : '');
    snippets.push(collapseSpaces(out));
  }
  return snippets;
}
