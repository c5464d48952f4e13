import { describe, expect, it } from 'vitest';
import { MAX_KEYWORD_TERMS, informativeWords, isInformative, keywordTerms } from '../../src/core/search/query-terms.ts';
import { STOP_WORDS } from '../../src/core/search/stop-words.ts';
import { HYBRID_DEFAULT_THRESHOLD, hybridRelevance } from '../../src/core/search/relevance.ts';
import { RELEVANT_SCORE } from '../../src/core/search/score-calibration.ts';

describe('query terms (the keyword leg and highlights)', () => {
  it('drops stop words and one-letter words, once, keeping order and case-folding', () => {
    expect(keywordTerms('Who gets paged first?')).toEqual(['gets', 'paged', 'first']);
    expect(keywordTerms('What is the capital of Peru?')).toEqual(['capital', 'peru']);
    expect(keywordTerms("Why don't price changes show up on the site right away?")).toEqual(['price', 'changes', 'show', 'site', 'right', 'away']);
    expect(keywordTerms('Deploy deploy DEPLOY notes')).toEqual(['deploy', 'notes']);
    // Codes and two-letter words stay: "Q3", "CI", "db:migrate".
    expect(keywordTerms('Q3 goals, CI and db:migrate')).toEqual(['q3', 'goals', 'ci', 'db', 'migrate']);
  });

  it('leaves no term for a query of nothing but stop words and one-letter words', () => {
    for (const q of ['I', 'do', 'what do I do?', "it's", 'a b c', 'Who is it, and where?']) expect(keywordTerms(q), q).toEqual([]);
  });

  it('keeps one-character words of scripts that write a word in one character, drops one-letter and one-digit words', () => {
    expect(isInformative('猫')).toBe(true);
    expect(isInformative('가')).toBe(true);
    for (const w of ['x', 'é', '7', 'ж']) expect(isInformative(w), w).toBe(false);
    expect(informativeWords('東京 x 7 tokyo')).toEqual(['東京', 'tokyo']);
  });

  it('caps the terms', () => {
    const many = Array.from({ length: 50 }, (_, i) => `word${i}`).join(' ');
    expect(keywordTerms(many)).toHaveLength(MAX_KEYWORD_TERMS);
  });

  it('keeps the stop-word list small and lowercase, and out of the way of words a memory is about', () => {
    expect(STOP_WORDS.size).toBeLessThan(200);
    for (const w of STOP_WORDS) expect(w).toBe(w.toLowerCase());
    // A month, a verb of winning: questions may be about them.
    for (const w of ['may', 'won', 'first', 'paged', 'release']) expect(STOP_WORDS.has(w), w).toBe(false);
  });
});

describe('hybrid relevance (the floor)', () => {
  it('is the similarity without keyword evidence, 1 with full coverage, and never below the similarity', () => {
    for (const s of [0, 0.3, 0.69, 0.7, 0.95, 1]) {
      expect(hybridRelevance(s, 0)).toBeCloseTo(s, 12);
      expect(hybridRelevance(s, 1)).toBe(1);
    }
    const below: number[][] = [];
    for (let s = 0; s <= 1; s += 0.05) for (let c = 0; c <= 1; c += 0.05) if (hybridRelevance(s, c) < s - 1e-12) below.push([s, c]);
    expect(below).toEqual([]);
  });

  it('never decreases when either signal grows', () => {
    const falls: number[][] = [];
    for (let s = 0; s <= 1; s += 0.05) {
      for (let c = 0; c <= 1; c += 0.05) {
        const r = hybridRelevance(s, c);
        if (hybridRelevance(s + 0.05, c) < r || hybridRelevance(s, c + 0.05) < r) falls.push([s, c]);
      }
    }
    expect(falls).toEqual([]);
  });

  it('lets two signals that each fall short reach the floor together, and counts partial coverage for little', () => {
    const floor = HYBRID_DEFAULT_THRESHOLD;
    expect(hybridRelevance(0.65, 0)).toBeLessThan(floor);
    expect(hybridRelevance(0, 0.5)).toBeLessThan(floor);
    expect(hybridRelevance(0.65, 0.5)).toBeGreaterThanOrEqual(floor);
    // One word of three matched by its stem ("paged" ~ "page"): no rescue for a weak semantic match.
    expect(hybridRelevance(0.58, 0.29)).toBeLessThan(floor);
  });

  it('defaults to the calibrated score that means relevant, as semantic search does', () => {
    expect(HYBRID_DEFAULT_THRESHOLD).toBe(RELEVANT_SCORE);
  });
});
