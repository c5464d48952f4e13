import { STOP_WORDS } from './stop-words.ts';

/**
 * Turning query text into the words that are evidence of what it asks: lowercase words of letters and digits, without
 * stop words (stop-words.ts) and one-character words, duplicates removed. Done here, once, for every consumer: the
 * terms the core hands to the stores' keyword ranking (which stem them themselves) and the words highlights mark.
 * A query of nothing but such words has no terms: keyword search finds nothing for it and highlights mark nothing
 * ("I" would otherwise mark "issued", "do" mark "done").
 */
export const MAX_KEYWORD_TERMS = 32;

export function wordsOf(text: string): string[] {
  return text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Scripts that write a whole word, or a syllable that means something, in one character: never "too short". */
const LOGOGRAPHIC = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** A word too short to be evidence: one letter or digit of an alphabetic script ("i", "s" of "it's", "7"). */
export function isTooShort(word: string): boolean {
  const first = word.codePointAt(0);
  if (first === undefined) return true;
  return word.length === (first > 0xffff ? 2 : 1) && !LOGOGRAPHIC.test(word);
}

/** Whether a (lowercase) word of a query is evidence of what it asks: neither a stop word nor too short. */
export const isInformative = (word: string): boolean => !STOP_WORDS.has(word) && !isTooShort(word);

/** The query's informative words, each once, in order. */
export function informativeWords(query: string): string[] {
  return [...new Set(wordsOf(query))].filter(isInformative);
}

/** The terms of keyword search and of hybrid's keyword leg: the informative words, at most MAX_KEYWORD_TERMS. */
export function keywordTerms(query: string): string[] {
  return informativeWords(query).slice(0, MAX_KEYWORD_TERMS);
}
