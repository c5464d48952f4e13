import { isBlank, type Embedder } from '../../core/embeddings/embedder.port.ts';

/**
 * Deterministic feature-hashing embedder: no model, no I/O, identical output on every machine. Meant for tests and
 * for running without a model; it captures word overlap (unigrams, bigrams) and spelling closeness (character
 * trigrams), not meaning.
 */
export function createHashingEmbedder(options: { dimensions?: number } = {}): Embedder {
  const dimensions = options.dimensions ?? 512;
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`invalid dimensions: ${dimensions}`);

  return {
    modelId: `hashing:v1-${dimensions}`,
    dimensions,
    embed: async (texts) => texts.map((text) => hashEmbed(text, dimensions)),
    close: async () => {},
  };
}

const UNIGRAM_WEIGHT = 1.0;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.3;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
// Each feature kind starts from its own seed so that e.g. the unigram "abc" and the trigram "abc" land apart.
const SEED_UNIGRAM = fnvStep(FNV_OFFSET, 0x75); // 'u'
const SEED_BIGRAM = fnvStep(FNV_OFFSET, 0x62); // 'b'
const SEED_TRIGRAM = fnvStep(FNV_OFFSET, 0x74); // 't'
const WORD_SEPARATOR = 0x20;
const WORD_START = 0x5e; // '^'
const WORD_END = 0x24; // '$'

const WORD = /[\p{L}\p{N}]+/gu;

export function hashEmbed(text: string, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  if (isBlank(text)) return out;
  // NFKC folds compatibility forms (full-width letters, ligatures) so they hash like their plain spelling.
  const words = text.normalize('NFKC').toLowerCase().match(WORD);
  if (!words) return out;

  let previous: string | undefined;
  for (const word of words) {
    add(out, fnvString(SEED_UNIGRAM, word), UNIGRAM_WEIGHT);
    if (previous !== undefined) {
      // Streaming FNV: the bigram hash is computed without building the "a b" string.
      const h = fnvString(fnvStep(fnvString(SEED_BIGRAM, previous), WORD_SEPARATOR), word);
      add(out, h, BIGRAM_WEIGHT);
    }
    addTrigrams(out, word);
    previous = word;
  }
  return l2NormalizeInPlace(out);
}

/** Character trigrams of `^word$`, read straight from the word without building the padded string. */
function addTrigrams(out: Float32Array, word: string): void {
  const padded = word.length + 2;
  const at = (i: number): number => (i === 0 ? WORD_START : i === padded - 1 ? WORD_END : word.charCodeAt(i - 1));
  for (let i = 0; i + 3 <= padded; i++) {
    add(out, fnvStep(fnvStep(fnvStep(SEED_TRIGRAM, at(i)), at(i + 1)), at(i + 2)), TRIGRAM_WEIGHT);
  }
}

/** Bucket from the hash modulo the width, sign from the top bit (independent of the low bits for 2^k widths). */
function add(out: Float32Array, hash: number, weight: number): void {
  const h = hash >>> 0;
  out[h % out.length]! += h & 0x80000000 ? -weight : weight;
}

/** FNV-1a 32-bit over UTF-16 code units (one step per code unit rather than per byte: same spread, fewer steps). */
function fnvStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, FNV_PRIME);
}

function fnvString(hash: number, s: string): number {
  let h = hash;
  for (let i = 0; i < s.length; i++) h = fnvStep(h, s.charCodeAt(i));
  return h;
}

function l2NormalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}
