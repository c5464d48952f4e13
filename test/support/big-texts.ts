/**
 * Large texts without a single space: the inputs that made token counting quadratic (one pre-tokenized piece, or a
 * few huge ones). Each is exactly `bytes` long in UTF-8 (whole characters only, padded with `x`).
 */

const MiB = 1024 * 1024;
export const ONE_MIB = MiB;

/** `x` repeated: one letter run, one piece for tiktoken. */
export const runOfX = (bytes = MiB): string => 'x'.repeat(bytes);

/** Emoji with skin tones, ZWJ sequences and variation selectors: one run of "other" symbols. */
export function runOfEmoji(bytes = MiB): string {
  const unit = ['😀', '🎉', '👍🏽', '🚀', '❤️', '👩‍💻', '🧑🏿‍🤝‍🧑🏻', '🏳️‍🌈', '🇫🇷', '🦄'].join('');
  return fill(unit, bytes);
}

/** CJK, Arabic, Cyrillic, Devanagari, Hangul and Thai letters with combining marks, no spaces. */
export function runOfMixedScripts(bytes = MiB): string {
  const unit = '中文字符日本語ひらがなالعربيةкириллицаe\u0301a\u0308o\u0489한국어ไทยहिन्दी१२३Ελληνικά';
  return fill(unit, bytes);
}

function fill(unit: string, bytes: number): string {
  const unitBytes = Buffer.byteLength(unit);
  let text = unit.repeat(Math.floor(bytes / unitBytes));
  let size = Buffer.byteLength(text);
  // Whole characters of one more unit while they fit, then `x` up to the exact size.
  for (const ch of unit) {
    const chBytes = Buffer.byteLength(ch);
    if (size + chBytes > bytes) break;
    text += ch;
    size += chBytes;
  }
  return text + 'x'.repeat(bytes - size);
}
