import { informativeWords } from './query-terms.ts';

/**
 * Highlights: up to `maxSnippets` snippets of about `width` characters around the query's words in a text, each
 * matched word wrapped in `<mark>…</mark>`. The rest of the snippet is HTML-escaped, so a snippet is safe to render
 * as HTML.
 *
 * Only the query's informative words count (query-terms.ts: no stop words, no one-letter words), so "I" never marks
 * "issued" nor "do" marks "done". A word of the text matches a query word
 * - exactly: the same word, case aside (strong evidence);
 * - by inflection: one is the other plus an English ending (`deploy` ~ `deployment`, `page` ~ `paged`, `run` ~
 *   `running`), the shorter of at least 3 letters, roughly as the keyword index's stemming goes (weaker evidence: the
 *   form may mean something else, `pages` of a web site for `paged` on call).
 * Both are marked, but snippets are placed on exact matches first: one around an inflected form only where no exact
 * match is left outside the snippets chosen. Snippets never overlap and come in the order of the text.
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

/** How a word of the text matches the query: not at all, by inflection, or exactly. */
export type MatchStrength = 'none' | 'inflected' | 'exact';

/**
 * English endings that make an inflected or derived form of a word (plurals, tenses, -ment, -ation, …): what the
 * longer of a word and a query word may add to the shorter for them to match by inflection.
 */
const ENDINGS: ReadonlySet<string> = new Set([
  's', 'es', 'd', 'ed', 'ing', 'ings', 'er', 'ers', 'est', 'ly', 'y', 'ment', 'ments', 'ness', 'ion', 'ions', 'ation',
  'ations', 'able', 'al', 'ful',
]);
/** The shorter of two forms matched by inflection is at least this long (`art` is not `article`'s stem). */
export const MIN_STEM = 3;

/**
 * Whether `rest`, what the longer form adds to `stem`, is an English ending, perhaps after doubling the stem's final
 * consonant (`run` + `n` + `ing`). Both lowercase.
 */
export function isInflection(stem: string, rest: string): boolean {
  if (stem.length < MIN_STEM) return false;
  if (ENDINGS.has(rest)) return true;
  const last = stem.charCodeAt(stem.length - 1);
  return rest.length > 1 && rest.charCodeAt(0) === last && !isVowel(last) && ENDINGS.has(rest.slice(1));
}
/** a e i o u (lowercase): a final vowel is never doubled before an ending. */
const isVowel = (c: number): boolean => c === 97 || c === 101 || c === 105 || c === 111 || c === 117;

/** How the lowercase word `w` matches the best of the query words `terms`. */
export function matchStrength(w: string, terms: readonly string[]): MatchStrength {
  let best: MatchStrength = 'none';
  for (const t of terms) {
    if (w === t) return 'exact';
    if (best === 'none' && (w.length > t.length
      ? w.startsWith(t) && isInflection(t, w.slice(t.length))
      : t.startsWith(w) && isInflection(w, t.slice(w.length)))) best = 'inflected';
  }
  return best;
}

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
    const terms = informativeWords(query);
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

interface Hit {
  start: number;
  end: number;
  exact: boolean;
}

/**
 * The words of the text that match a term, in order: one scan of char codes (no regex match, no callback per word; a
 * memory has about a hundred words and few can match). A word is compared only with the terms that start with its
 * lowercase first letter: an ASCII one (most) in place, any other lowercased first.
 */
function matchingWords(text: string, initials: Initials): Hit[] {
  const hits: Hit[] = [];
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
    const strength = ascii ? asciiWordStrength(text, start, i, alike) : matchStrength(text.slice(start, i).toLowerCase(), alike);
    if (strength !== 'none') hits.push({ start, end: i, exact: strength === 'exact' });
  }
  return hits;
}

/** matchStrength for the ASCII word text[start, end), lowercased char by char as toLowerCase would (A-Z only). */
function asciiWordStrength(text: string, start: number, end: number, terms: readonly string[]): MatchStrength {
  const length = end - start;
  let best: MatchStrength = 'none';
  for (const t of terms) {
    const common = Math.min(length, t.length);
    let j = 0;
    while (j < common) {
      const c = text.charCodeAt(start + j);
      if ((c >= 65 && c <= 90 ? c + 32 : c) !== t.charCodeAt(j)) break;
      j++;
    }
    if (j < common) continue;
    if (length === t.length) return 'exact';
    // One is a prefix of the other: an inflection when the longer adds an ending (rare: built as strings).
    if (best === 'none' && (length > t.length
      ? isInflection(t, text.slice(start + t.length, end).toLowerCase())
      : isInflection(text.slice(start, end).toLowerCase(), t.slice(length)))) best = 'inflected';
  }
  return best;
}

/** The first UTF-16 unit of the word's lowercase form (that of its first letter, for an ASCII one). */
function lowerInitial(text: string, start: number, end: number): number {
  const c = text.charCodeAt(start);
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c;
  return text.slice(start, end).toLowerCase().charCodeAt(0);
}

/**
 * Where the snippets lie: [from, to) windows of the text, in text order, that do not overlap. Each is placed on a
 * hit no window holds yet (exact hits first, then inflected ones, each in text order): from a third of `width`
 * before it (at a word start when a space is near), to `width` after that (at a word end), within the gap that the
 * windows already placed leave around it.
 */
function snippetWindows(text: string, hits: readonly Hit[], maxSnippets: number, width: number): { from: number; to: number }[] {
  const windows: { from: number; to: number }[] = [];
  const anchors = hits.some((h) => !h.exact) ? [...hits.filter((h) => h.exact), ...hits.filter((h) => !h.exact)] : hits;
  for (const anchor of anchors) {
    if (windows.length === maxSnippets) break;
    // The gap around the anchor: after the last window starting before it, before the first starting after it.
    let at = 0;
    while (at < windows.length && windows[at]!.from <= anchor.start) at++;
    const gapStart = at > 0 ? windows[at - 1]!.to : 0;
    const gapEnd = at < windows.length ? windows[at]!.from : text.length;
    // Held by a window already, or cut by one's end (no window can show it whole).
    if (gapStart > anchor.start || anchor.end > gapEnd) continue;
    let from = Math.max(gapStart, anchor.start - Math.floor(width / 3));
    // Start on a word boundary: the first word that begins at or after `from` (the anchor itself at the latest).
    if (from > 0 && text.charCodeAt(from - 1) !== 32) {
      const space = text.indexOf(' ', from);
      from = space >= 0 && space < anchor.start ? space + 1 : anchor.start;
    }
    let to = Math.min(gapEnd, Math.max(from + width, anchor.end));
    if (to < text.length) {
      const space = text.lastIndexOf(' ', to);
      if (space > anchor.end) to = space;
    }
    windows.splice(at, 0, { from, to });
  }
  return windows;
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
  for (const { from, to } of snippetWindows(text, hits, maxSnippets, width)) {
    let out = from > 0 ? '…' : '';
    let cursor = from;
    while (i < hits.length && hits[i]!.start < from) i++;
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
