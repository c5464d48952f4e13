import { MAX_TITLE_LENGTH } from './memory.types.ts';

const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;

/**
 * A title for a memory that arrived without one (G2, G6 create): the text's first non-blank line, whitespace
 * collapsed, cut to at most 255 characters (code points) on a word boundary with `…` when cut. Null when the text
 * has no non-blank line.
 */
export function titleFromText(text: string): string | null {
  const line = text.split(LINE_BREAK).find((l) => l.trim().length > 0);
  if (line === undefined) return null;
  const collapsed = line.replace(/\s+/g, ' ').trim();
  const chars = [...collapsed];
  if (chars.length <= MAX_TITLE_LENGTH) return collapsed;
  // Room for the ellipsis; a cut right before a space is already on a word boundary.
  const head = chars.slice(0, MAX_TITLE_LENGTH - 1).join('');
  const lastSpace = head.lastIndexOf(' ');
  const cut = chars[MAX_TITLE_LENGTH - 1] === ' ' || lastSpace <= 0 ? head : head.slice(0, lastSpace);
  return `${cut.trimEnd()}…`;
}
