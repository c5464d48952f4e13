import { MAX_TITLE_LENGTH } from './memory.types.ts';

const LINE_END = /[\n\r\u2028\u2029]/g;
const WORD = /\S+/g;
const NOT_BLANK = /\S/;

/**
 * A title for a memory that arrived without one (G2, G6 create): the text's first non-blank line, whitespace
 * collapsed, cut to at most 255 characters (code points) on a word boundary with `…` when cut. Null when the text
 * has no non-blank line.
 *
 * Reads no further than the title needs (the text may be megabytes, in one line): up to the first non-blank
 * character, then that line's words until the title is known to be cut.
 */
export function titleFromText(text: string): string | null {
  const line = firstNonBlankLine(text);
  if (line === undefined) return null;
  const collapsed = collapsedHead(line, MAX_TITLE_LENGTH + 1);
  const chars = [...collapsed];
  if (chars.length <= MAX_TITLE_LENGTH) return collapsed;
  // Room for the ellipsis; a cut right before a space is already on a word boundary.
  const head = chars.slice(0, MAX_TITLE_LENGTH - 1).join('');
  const lastSpace = head.lastIndexOf(' ');
  const cut = chars[MAX_TITLE_LENGTH - 1] === ' ' || lastSpace <= 0 ? head : head.slice(0, lastSpace);
  return `${cut.trimEnd()}…`;
}

/** From the first non-blank character to the end of its line (what precedes it on the line is blank). */
function firstNonBlankLine(text: string): string | undefined {
  const first = text.search(NOT_BLANK);
  if (first < 0) return undefined;
  const lineEnd = new RegExp(LINE_END);
  lineEnd.lastIndex = first;
  const end = lineEnd.exec(text)?.index ?? text.length;
  return text.slice(first, end);
}

/**
 * The line's words joined by single spaces (whitespace collapsed, ends trimmed), cut once it has at least
 * `chars` code points: what comes after cannot change the title.
 */
function collapsedHead(line: string, chars: number): string {
  const words = new RegExp(WORD);
  let head = '';
  for (let found = words.exec(line); found !== null; found = words.exec(line)) {
    // A code point is at most two UTF-16 units: 2 × chars units of a word hold its first `chars` code points.
    head += (head === '' ? '' : ' ') + found[0].slice(0, 2 * chars);
    if (head.length >= 2 * chars || [...head].length >= chars) break;
  }
  return head;
}
