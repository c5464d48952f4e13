import { MAX_TITLE_LENGTH } from './memory.types.ts';

/**
 * A title for a memory that arrived without one (G2, G6 create): the text's first non-blank line, whitespace
 * collapsed, cut on a word boundary to at most 255 characters with `…` when cut. Empty when the text is blank.
 */
export function titleFromText(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l.length > 0) ?? '';
  const chars = [...line];
  if (chars.length <= MAX_TITLE_LENGTH) return line;
  const cut = chars.slice(0, MAX_TITLE_LENGTH - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_TITLE_LENGTH / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
