import { TokenPairs } from './token-pairs.ts';

/** A tiktoken encoding as js-tiktoken ships it (`js-tiktoken/ranks/*`). */
export interface TiktokenRanksSource {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

/** A byte-pair-encoding vocabulary ready for counting. */
export interface BpeVocabulary {
  /** Rank of every token, keyed by its bytes as a binary string (one char per byte, 0-255). */
  ranks: Map<string, number>;
  /** The token of each single byte (every byte is one in tiktoken's encodings). */
  byteTokens: Int32Array;
  /** What two adjacent tokens merge into. */
  pairs: TokenPairs;
  /** The pre-tokenizing pattern (tiktoken's `pat_str`): merges only ever happen inside one of its matches. */
  pattern: string;
  /** Special tokens such as `<|endoftext|>`, each counted as one token where it appears. */
  specialTokens: string[];
}

/** Tokens handled between two chances to pause: the whole load in one go would hold the event loop too long. */
const TOKENS_PER_STEP = 2048;

/**
 * Decodes js-tiktoken's compact rank lists (lines of `<ignored> <first rank> <base64 token> <base64 token> ...`)
 * and derives the pair table, yielding every TOKENS_PER_STEP tokens so that a caller can let the event loop run.
 */
export function* loadVocabulary(source: TiktokenRanksSource): Generator<void, BpeVocabulary, void> {
  const ranks = new Map<string, number>();
  for (const line of source.bpe_ranks.split('\n')) {
    if (line.length === 0) continue;
    const [, offset, ...tokens] = line.split(' ');
    const first = Number.parseInt(offset ?? '', 10);
    for (let i = 0; i < tokens.length; i++) {
      ranks.set(Buffer.from(tokens[i]!, 'base64').toString('latin1'), first + i);
      if ((i + 1) % TOKENS_PER_STEP === 0) yield;
    }
  }

  const byteTokens = new Int32Array(256);
  for (let b = 0; b < 256; b++) {
    const token = ranks.get(String.fromCharCode(b));
    // Counting relies on it: every part of a piece is then always a token, and nothing is ever dropped.
    if (token === undefined) throw new Error(`BPE vocabulary lacks the single byte ${b}`);
    byteTokens[b] = token;
  }

  // Every way of cutting a token into two tokens is a merge BPE may make (cl100k_base: ~233 000 of them).
  const pairs = new TokenPairs(ranks.size * 6);
  let done = 0;
  for (const [bytes, token] of ranks) {
    for (let cut = 1; cut < bytes.length; cut++) {
      const left = ranks.get(bytes.slice(0, cut));
      const right = left === undefined ? undefined : ranks.get(bytes.slice(cut));
      if (left !== undefined && right !== undefined) pairs.set(left, right, token);
    }
    if (++done % TOKENS_PER_STEP === 0) yield;
  }
  return { ranks, byteTokens, pairs, pattern: source.pat_str, specialTokens: Object.keys(source.special_tokens) };
}
