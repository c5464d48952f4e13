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
/** What a snippet of a text with nothing to escape or collapse goes through instead (one function each, not one a call). */
const unchanged = (s: string): string => s;
const trimmed = (s: string): string => s.trim();

/** The query's terms and the first letters they start with; a search highlights its hits with one query. */
let lastQuery: { query: string; terms: string[]; initials: Initials } | null = null;

/**
 * The terms by their first UTF-16 unit: a word can match only the terms its lowercase form starts like (one starts
 * with the other), so each word is compared with those alone. A table for ASCII initials (most words), a map beyond.
 */
interface Initials {
  ascii: (string[] | undefined)[];
  other: Map<number, string[]>;
}

function termsOf(query: string): { terms: string[]; initials: Initials } {
  if (lastQuery?.query !== query) {
    const terms = [...new Set(wordsOf(query))].filter((t) => t.length >= 2);
    const initials: Initials = { ascii: new Array<string[] | undefined>(128).fill(undefined), other: new Map() };
    for (const t of terms) {
      const c = t.charCodeAt(0);
      const bucket = (c < 128 ? initials.ascii[c] : initials.other.get(c)) ?? [];
      bucket.push(t);
      if (c < 128) initials.ascii[c] = bucket;
      else initials.other.set(c, bucket);
    }
    lastQuery = { query, terms, initials };
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
 * The bounds of the words of the text that match a term, in order: one scan of char codes (no regex match, no callback
 * per word; a memory has about a hundred words and few can match). A word is compared only with the terms that start
 * with its lowercase first letter: an ASCII one (most) in place, any other lowercased first.
 */
function matchingWords(text: string, initials: Initials): { start: number; end: number }[] {
  const hits: { start: number; end: number }[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const first = text.charCodeAt(i);
    const width = first < 128 ? ASCII_WORD[first]! : wordCharWidth(text, i);
    if (width === 0) {
      i++;
      continue;
    }
    const start = i;
    let ascii = first < 128;
    i += width;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < 128) {
        if (ASCII_WORD[c] === 0) break;
        i++;
      } else {
        const w = wordCharWidth(text, i);
        if (w === 0) break;
        ascii = false;
        i += w;
      }
    }
    const initial = lowerInitial(text, start, i);
    const alike = initial < 128 ? initials.ascii[initial] : initials.other.get(initial);
    if (!alike) continue;
    const matches = ascii ? asciiWordMatches(text, start, i, alike) : wordMatches(text.slice(start, i).toLowerCase(), alike);
    if (matches) hits.push({ start, end: i });
  }
  return hits;
}

/** A word and a term match when one starts with the other, the word at least 3 letters long to be the shorter. */
const wordMatches = (w: string, terms: readonly string[]): boolean =>
  terms.some((t) => (w.length >= 3 && t.startsWith(w)) || w.startsWith(t));

/** wordMatches for the ASCII word text[start, end), lowercased char by char as toLowerCase would (A-Z only). */
function asciiWordMatches(text: string, start: number, end: number, terms: readonly string[]): boolean {
  const length = end - start;
  for (const t of terms) {
    const common = Math.min(length, t.length);
    let j = 0;
    while (j < common) {
      const c = text.charCodeAt(start + j);
      if ((c >= 65 && c <= 90 ? c + 32 : c) !== t.charCodeAt(j)) break;
      j++;
    }
    // One is a prefix of the other: the word of the term (it is at least as long), or the term of a 3+ letter word.
    if (j === common && (t.length <= length || length >= 3)) return true;
  }
  return false;
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
  // Positions of matching words in the original text.
  const hits = matchingWords(text, initials);
  if (hits.length === 0) return [];
  // Tested once on the whole text: a snippet holds only its slices, marks and ellipses, so what the text lacks, every
  // snippet lacks (most texts need neither escaping nor space collapsing).
  const escape = NEEDS_ESCAPE.test(text) ? escapeHtml : unchanged;
  const collapse = LOOSE_SPACE.test(text) ? collapseSpaces : trimmed;

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
      out += `${escape(text.slice(cursor, h.start))}<mark>${escape(text.slice(h.start, h.end))}</mark>`;
      cursor = h.end;
      i++;
    }
    out += escape(text.slice(cursor, to)) + (to < text.length ? '…' : '');
    snippets.push(collapse(out));
  }
  return snippets;
}
