import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../support/seeded-random.ts';
import { highlight, isInflection, matchStrength } from '../../src/core/search/highlights.ts';
import { informativeWords } from '../../src/core/search/query-terms.ts';

/** The endings of an inflected form, restated for the reference below (highlights.ts has its own). */
const ENDINGS = ['s', 'es', 'd', 'ed', 'ing', 'ings', 'er', 'ers', 'est', 'ly', 'y', 'ment', 'ments', 'ness', 'ion', 'ions',
  'ation', 'ations', 'able', 'al', 'ful'];

/**
 * The plain statement of highlighting (words by a Unicode regex, inflections by a regex, every snippet escaped and its
 * spaces collapsed by regex) against highlight(), which scans char codes and skips work where nothing is to be done:
 * the same snippets.
 */
function reference(text: string, query: string): string[] {
  const terms = informativeWords(query);
  if (terms.length === 0 || text.length === 0) return [];
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const inflects = (stem: string, longer: string) => stem.length >= 3 && longer.startsWith(stem)
    && new RegExp(`^(${stem.at(-1)!.replace(/[aeiou]/, '')})?(${ENDINGS.join('|')})$`, 'u').test(longer.slice(stem.length));
  const strength = (word: string) => {
    const w = word.toLowerCase();
    if (terms.includes(w)) return 2;
    return terms.some((t) => (w.length > t.length ? inflects(t, w) : inflects(w, t))) ? 1 : 0;
  };
  const hits = [...text.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => ({ start: m.index, end: m.index + m[0].length, strength: strength(m[0]) }))
    .filter((h) => h.strength > 0);
  const windows: { from: number; to: number }[] = [];
  for (const anchor of [...hits.filter((h) => h.strength === 2), ...hits.filter((h) => h.strength === 1)]) {
    if (windows.length === 3) break;
    const before = windows.filter((w) => w.from <= anchor.start);
    const after = windows.filter((w) => w.from > anchor.start);
    const gapStart = Math.max(0, ...before.map((w) => w.to));
    const gapEnd = Math.min(text.length, ...after.map((w) => w.from));
    if (gapStart > anchor.start || anchor.end > gapEnd) continue;
    let from = Math.max(gapStart, anchor.start - Math.floor(160 / 3));
    if (from > 0 && text[from - 1] !== ' ') {
      const space = text.indexOf(' ', from);
      from = space >= 0 && space < anchor.start ? space + 1 : anchor.start;
    }
    let to = Math.min(gapEnd, Math.max(from + 160, anchor.end));
    if (to < text.length) {
      const space = text.lastIndexOf(' ', to);
      if (space > anchor.end) to = space;
    }
    windows.push({ from, to });
    windows.sort((a, b) => a.from - b.from);
  }
  return windows.map(({ from, to }) => {
    let out = from > 0 ? '…' : '';
    let cursor = from;
    for (const h of hits.filter((x) => x.start >= from && x.end <= to)) {
      out += `${escape(text.slice(cursor, h.start))}<mark>${escape(text.slice(h.start, h.end))}</mark>`;
      cursor = h.end;
    }
    out += escape(text.slice(cursor, to)) + (to < text.length ? '…' : '');
    return out.replace(/\s+/g, ' ').trim();
  });
}

// Words and pieces that stress the scan: ASCII and accented words, inflected forms, stop words and one-letter words,
// capitals whose lowercase differs in length (İ), letters beyond the BMP (𝐀𝐁, 𐐀), CJK, digits of other scripts (٣),
// emoji (not letters), lone surrogates, combining marks, HTML specials, tabs, newlines, no-break and double spaces.
const PIECES = [
  'deploy', 'Deployment', 'DEPLOY', 'deployed', 'dep', 'run', 'Running', 'runs', 'runner', 'Élan', 'ärger', 'ÄRGER', 'ROLLBACK',
  'rollback', 'rollbacks', 'café', 'CAFÉ', 'İstanbul', 'straße', '𝐀𝐁c', '𐐀𐐨x', '東京', '٣٤', 'x2', '🚀', '\uD800', '\uDC00',
  'e\u0301', '&', '<b>', '"q"', "it's", 'issued', 'done', 'I', 'we', '\t', '\n', '\u00a0', '  ', ' ', ' ', ' ', '-', '.',
];
/** Nothing to escape and no loose space: the pieces of most texts, which skip escaping and collapsing altogether. */
const PLAIN_PIECES = PIECES.filter((p) => !/[&<>"'\s]/.test(p) || p === ' ');
const QUERIES = ['deploy rollback', 'élan Ärger', 'how do we deploy?', 'café istanbul', 'İstanbul', '𝐀𝐁c 東京', '٣٤ x2', 'a', 'dep',
  'it s', '🚀', 'deployed runs', 'I do', 'rollbacks running'];

describe('highlight', () => {
  it('gives the snippets of the plain regex statement, on text in any script', () => {
    const next = random(5);
    for (let round = 0; round < 3000; round++) {
      // Long texts too, so that snippets are cut and placed around each other.
      const length = Math.floor(next() * (round % 10 === 0 ? 400 : 120));
      const pieces = round % 2 === 0 ? PIECES : PLAIN_PIECES;
      const text = Array.from({ length }, () => pieces[Math.floor(next() * pieces.length)]!).join('');
      const query = QUERIES[round % QUERIES.length]!;
      expect(highlight(text, query), JSON.stringify({ text, query })).toEqual(reference(text, query));
    }
  });

  it('marks the query words and their inflected forms, not stop words, and escapes the rest', () => {
    expect(highlight('We <deploy> with blue/green; Deployments & rollbacks', 'how do we deploy')).toEqual([
      'We &#60;<mark>deploy</mark>&#62; with blue/green; <mark>Deployments</mark> &#38; rollbacks',
    ]);
    expect(highlight('  many\t\tspaces  deploy\n here ', 'deploy')).toEqual(['many spaces <mark>deploy</mark> here']);
  });

  it('never marks words for a stop word or a one-letter word of the query', () => {
    const text = 'The permit was issued on Monday, and the work is done: I checked it.';
    expect(highlight(text, 'I')).toEqual([]);
    expect(highlight(text, 'do')).toEqual([]);
    expect(highlight(text, 'what do I do')).toEqual([]);
    expect(highlight(text, 'when was it issued?')).toEqual(['The permit was <mark>issued</mark> on Monday, and the work is done: I checked it.']);
  });

  it('matches an inflected form only by an English ending, the stem at least 3 letters', () => {
    expect(matchStrength('deploy', ['deploy'])).toBe('exact');
    for (const [word, term] of [['deployment', 'deploy'], ['page', 'paged'], ['paged', 'page'], ['running', 'run'], ['planned', 'plan'], ['notes', 'note']]) {
      expect(matchStrength(word!, [term!]), `${word} ~ ${term}`).toBe('inflected');
    }
    // Neither is the other plus an ending: a different word, not a form of it.
    for (const [word, term] of [['article', 'art'], ['penicillin', 'pen'], ['pages', 'paged'], ['done', 'do'], ['issued', 'is'], ['career', 'car']]) {
      expect(matchStrength(word!, [term!]), `${word} !~ ${term}`).toBe('none');
    }
    expect(isInflection('go', 'es')).toBe(false); // too short a stem
    expect(isInflection('free', 'ed')).toBe(true);
    expect(isInflection('see', 'eing')).toBe(false); // a vowel is not doubled
  });

  it('places snippets on exact matches before inflected ones: a stemmed match is weaker evidence', () => {
    const filler = 'and then some more words '.repeat(12);
    const text = `Deployments were slow. ${filler}We deploy on Fridays. ${filler}Deployed twice. ${filler}The deploy is green.`;
    const one = highlight(text, 'deploy', { maxSnippets: 1 });
    expect(one).toHaveLength(1);
    expect(one[0]).toContain('We <mark>deploy</mark> on Fridays');
    const two = highlight(text, 'deploy', { maxSnippets: 2 });
    expect(two.map((s) => s.includes('We <mark>deploy</mark>') || s.includes('The <mark>deploy</mark> is green'))).toEqual([true, true]);
    // With room for every snippet they come in the order of the text, never overlapping.
    const all = highlight(text, 'deploy', { maxSnippets: 4 });
    expect(all).toHaveLength(4);
    expect(all[0]).toContain('<mark>Deployments</mark> were slow');
    expect(all[2]).toContain('<mark>Deployed</mark> twice');
  });
});
