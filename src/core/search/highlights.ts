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

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The query's terms and the first letters they start with; a search highlights its hits with one query. */
let lastQuery: { query: string; terms: string[]; initials: Set<string> } | null = null;

function termsOf(query: string): { terms: string[]; initials: Set<string> } {
  if (lastQuery?.query !== query) {
    const terms = [...new Set(wordsOf(query))].filter((t) => t.length >= 2);
    lastQuery = { query, terms, initials: new Set(terms.map((t) => t[0]!)) };
  }
  return lastQuery;
}

export function highlight(text: string, query: string, options: HighlightOptions = {}): string[] {
  const maxSnippets = options.maxSnippets ?? 3;
  const width = options.width ?? 160;
  const { terms, initials } = termsOf(query);
  if (terms.length === 0 || text.length === 0) return [];
  // A word and a term match only if one starts with the other, so only a word whose first letter starts a term can.
  const matches = (word: string) => {
    const w = word.toLowerCase();
    return initials.has(w[0]!) && terms.some((t) => (w.length >= 3 && t.startsWith(w)) || w.startsWith(t));
  };

  // Positions of matching words in the original text.
  const hits: { start: number; end: number }[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (matches(m[0])) hits.push({ start: m.index, end: m.index + m[0].length });
  }
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
    snippets.push(out.replace(/\s+/g, ' ').trim());
  }
  return snippets;
}
