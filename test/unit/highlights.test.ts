import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../support/seeded-random.ts';
import { highlight } from '../../src/core/search/highlights.ts';
import { wordsOf } from '../../src/core/search/query-terms.ts';

/**
 * The plain statement of highlighting (words by a Unicode regex, every snippet escaped and its spaces collapsed by
 * regex) against highlight(), which scans char codes and skips work where nothing is to be done: the same snippets.
 */
function reference(text: string, query: string): string[] {
  const terms = [...new Set(wordsOf(query))].filter((t) => t.length >= 2);
  if (terms.length === 0 || text.length === 0) return [];
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const matches = (word: string) => {
    const w = word.toLowerCase();
    return terms.some((t) => (w.length >= 3 && t.startsWith(w)) || w.startsWith(t));
  };
  const hits = [...text.matchAll(/[\p{L}\p{N}]+/gu)].filter((m) => matches(m[0])).map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const snippets: string[] = [];
  let i = 0;
  while (i < hits.length && snippets.length < 3) {
    const first = hits[i]!;
    let from = Math.max(0, first.start - Math.floor(160 / 3));
    if (from > 0) {
      const space = text.lastIndexOf(' ', first.start);
      from = space >= from ? space + 1 : from;
    }
    let to = Math.min(text.length, Math.max(from + 160, first.end));
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
    snippets.push(out.replace(/\s+/g, ' ').trim());
  }
  return snippets;
}

// Words and pieces that stress the scan: ASCII and accented words, capitals whose lowercase differs in length (İ),
// letters beyond the BMP (𝐀𝐁, 𐐀), CJK, digits of other scripts (٣), emoji (not letters), lone surrogates,
// combining marks, HTML specials, tabs, newlines, no-break and double spaces.
const PIECES = [
  'deploy', 'Deployment', 'DEPLOY', 'dep', 'Élan', 'ärger', 'ÄRGER', 'ROLLBACK', 'rollback', 'café', 'CAFÉ', 'İstanbul', 'straße', '𝐀𝐁c', '𐐀𐐨x',
  '東京', '٣٤', 'x2', '🚀', '\uD800', '\uDC00', 'e\u0301', '&', '<b>', '"q"', "it's", '\t', '\n', '\u00a0', '  ', ' ', ' ', ' ', '-', '.',
];
/** Nothing to escape and no loose space: the pieces of most texts, which skip escaping and collapsing altogether. */
const PLAIN_PIECES = PIECES.filter((p) => !/[&<>"'\s]/.test(p) || p === ' ');
const QUERIES = ['deploy rollback', 'élan Ärger', 'how do we deploy?', 'café istanbul', 'İstanbul', '𝐀𝐁c 東京', '٣٤ x2', 'a', 'dep', 'it s', '🚀'];

describe('highlight', () => {
  it('gives the snippets of the plain regex statement, on text in any script', () => {
    const next = random(5);
    for (let round = 0; round < 3000; round++) {
      const length = Math.floor(next() * 120);
      const pieces = round % 2 === 0 ? PIECES : PLAIN_PIECES;
      const text = Array.from({ length }, () => pieces[Math.floor(next() * pieces.length)]!).join('');
      const query = QUERIES[round % QUERIES.length]!;
      expect(highlight(text, query), JSON.stringify({ text, query })).toEqual(reference(text, query));
    }
  });

  it('marks the words that start with a query word, or that a query word starts with, and escapes the rest', () => {
    expect(highlight('We <deploy> with blue/green; Deployments & rollbacks', 'how do we deploy')).toEqual([
      '<mark>We</mark> &#60;<mark>deploy</mark>&#62; with blue/green; <mark>Deployments</mark> &#38; rollbacks',
    ]);
    expect(highlight('  many\t\tspaces  deploy\n here ', 'deploy')).toEqual(['many spaces <mark>deploy</mark> here']);
  });
});
