import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { titleFromText } from '../../src/core/memories/title.ts';
import { MAX_TITLE_LENGTH } from '../../src/core/memories/memory.types.ts';

/** The rule, written the obvious way (which reads the whole text): the first non-blank line, collapsed, cut. */
function titleByTheRule(text: string): string | null {
  const line = text.split(/\r\n|[\n\r\u2028\u2029]/).find((l) => l.trim().length > 0);
  if (line === undefined) return null;
  const chars = [...line.replace(/\s+/g, ' ').trim()];
  if (chars.length <= MAX_TITLE_LENGTH) return chars.join('');
  const head = chars.slice(0, MAX_TITLE_LENGTH - 1).join('');
  const lastSpace = head.lastIndexOf(' ');
  return `${(chars[MAX_TITLE_LENGTH - 1] === ' ' || lastSpace <= 0 ? head : head.slice(0, lastSpace)).trimEnd()}…`;
}

describe('titleFromText', () => {
  it('is the first non-blank line, whitespace collapsed, cut to 255 characters on a word boundary', () => {
    expect(titleFromText('\n  \r\n  Deploy   notes\t here \nsecond line')).toBe('Deploy notes here');
    expect(titleFromText(' \n\t\u2028 ')).toBeNull();
    const long = titleFromText(`${'word '.repeat(100)}`)!;
    expect(long.endsWith('…')).toBe(true);
    expect([...long].length).toBeLessThanOrEqual(MAX_TITLE_LENGTH);
  });

  it('agrees with the rule on arbitrary text (property)', () => {
    const parts = ['a', 'word ', ' ', '  ', '\n', '\r\n', '\r', '\u2028', '\t', '\u00a0', 'é', '😀', '中文', '\ud800',
      'x'.repeat(300), ' '.repeat(300), 'ab cd ef '.repeat(40), '😀'.repeat(200)];
    fc.assert(fc.property(fc.array(fc.oneof(fc.constantFrom(...parts), fc.string({ maxLength: 5 })), { maxLength: 60 }), (ps) => {
      const text = ps.join('');
      expect(titleFromText(text)).toBe(titleByTheRule(text));
    }), { numRuns: 2000 });
  });

  it('gives the same title for megabyte texts in one line, after a megabyte of blank lines, or of spaces', () => {
    for (const text of ['x'.repeat(1 << 20), `${'\n'.repeat(1 << 20)}b c`, `${' '.repeat(1 << 20)}a ${'😀'.repeat(1 << 19)}`]) {
      expect(titleFromText(text)).toBe(titleByTheRule(text));
    }
  });
});
