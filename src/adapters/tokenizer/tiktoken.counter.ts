import cl100k from 'js-tiktoken/ranks/cl100k_base';
import type { TokenCounter } from '../../core/embeddings/token-counter.port.ts';
import { loadVocabulary, type BpeVocabulary } from './bpe-vocabulary.ts';
import { countPiece, countShortPiece } from './byte-pair-count.ts';
import { runInSlices } from './time-sliced.ts';

/** Longest stretch of counting between two turns of the event loop. */
const SLICE_MS = 5;
/** Pieces counted between two chances to pause (short pieces take well under a microsecond each). */
const PIECES_PER_STEP = 64;

/**
 * OpenAI's cl100k_base BPE (the tokenizer of its embedding models), from js-tiktoken's bundled ranks, counted
 * exactly as js-tiktoken's `encode(text, 'all').length` (special tokens such as `<|endoftext|>` count as one)
 * but in O(n log n) time and in slices of at most ~SLICE_MS that let the event loop run between them.
 */
export function createTiktokenCounter(): TokenCounter {
  // Built on first use: decoding the ranks takes a while (in slices too) and most processes never need them.
  let vocabulary: Promise<BpeVocabulary> | undefined;
  return {
    name: 'cl100k_base',
    async count(text) {
      vocabulary ??= runInSlices(loadVocabulary(cl100k), SLICE_MS);
      return runInSlices(countTokens(text, await vocabulary), SLICE_MS);
    },
  };
}

/** Counts in steps: tiktoken's pre-tokenizing split first (merges never cross its pieces), then each piece. */
function* countTokens(text: string, vocab: BpeVocabulary): Generator<void, number, void> {
  // The text's UTF-8 bytes, one char per byte: each piece's bytes are a slice of it (no encoding per piece).
  const bytes = Buffer.from(text, 'utf8').toString('latin1');
  const specials = specialTokenPattern(vocab.specialTokens);
  const pieces = new RegExp(vocab.pattern, 'gu');
  let tokens = 0;
  let byteAt = 0;
  let charAt = 0;
  let sinceStep = 0;
  for (let segmentStart = 0; segmentStart <= text.length;) {
    specials.lastIndex = segmentStart;
    const special = specials.exec(text);
    const segmentEnd = special ? special.index : text.length;
    // The pattern runs on the segment alone, as tiktoken does: its lookahead must not see the special token.
    const segment = text.slice(segmentStart, segmentEnd);
    pieces.lastIndex = 0;
    for (let m = pieces.exec(segment); m !== null; m = pieces.exec(segment)) {
      const start = segmentStart + m.index;
      const end = start + m[0].length;
      byteAt += utf8Length(text, charAt, start); // text the pattern skipped (none with tiktoken's patterns)
      const length = utf8Length(text, start, end);
      const piece = bytes.slice(byteAt, byteAt + length);
      byteAt += length;
      charAt = end;
      tokens += countShortPiece(piece, vocab) ?? (yield* countPiece(piece, vocab));
      if (++sinceStep === PIECES_PER_STEP) {
        sinceStep = 0;
        yield;
      }
    }
    if (!special) break;
    tokens += 1;
    byteAt += utf8Length(text, charAt, special.index + special[0].length);
    charAt = special.index + special[0].length;
    segmentStart = charAt;
    yield;
  }
  return tokens;
}

const escapeRegExp = (s: string): string => s.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&');

function specialTokenPattern(tokens: readonly string[]): RegExp {
  return new RegExp(tokens.map(escapeRegExp).join('|'), 'g');
}

/** UTF-8 length of text[from, to) as Buffer encodes it (a lone surrogate becomes U+FFFD, 3 bytes). */
function utf8Length(text: string, from: number, to: number): number {
  let length = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) length += 1;
    else if (c < 0x800) length += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to && isLowSurrogate(text.charCodeAt(i + 1))) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}

const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
