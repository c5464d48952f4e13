import { describe, expect, it } from 'vitest';
import { DISTRACTORS, SUBJECTS, fixtureProblems } from '../../bench/updates/fixture.ts';
import { pastIndexes, violations, writeSchedule, type EmbedderRunResult, type KindSummary } from '../../bench/updates/evaluate.ts';

/** Keeps `npm run bench:updates` honest: its data and the questions it asks (no server, no model). */
describe('bench:updates fixture', () => {
  it('has at least 50 subjects of 2-4 distinct facts, and no problem the bench would refuse', () => {
    expect(SUBJECTS.length).toBeGreaterThanOrEqual(50);
    for (const s of SUBJECTS) {
      expect(s.facts.length, s.id).toBeGreaterThanOrEqual(2);
      expect(s.facts.length, s.id).toBeLessThanOrEqual(4);
    }
    expect(fixtureProblems()).toEqual([]);
    expect(fixtureProblems([{ id: 'x', title: 'X', question: 'q?', facts: ['only one'] }], [])).toHaveLength(2);
  });

  it('writes every fact and distractor once, fact r of each subject in round r (so an as_of moment lies between two facts)', () => {
    const schedule = writeSchedule();
    const seen = new Map<string, number>();
    schedule.forEach((round, r) => {
      for (const w of round) {
        const key = w.label.kind === 'fact' ? `${w.label.subject}#${w.label.index}` : `d${w.label.index}`;
        expect(seen.has(key), key).toBe(false);
        seen.set(key, r);
        if (w.label.kind === 'fact') {
          expect(w.label.index).toBe(r);
          const subject = SUBJECTS.find((s) => s.id === (w.label as { subject: string }).subject)!;
          expect(w.content).toBe(subject.facts[r]);
        }
      }
    });
    expect(seen.size).toBe(SUBJECTS.reduce((n, s) => n + s.facts.length, 0) + DISTRACTORS.length);
    expect(writeSchedule()).toEqual(schedule);
  });

  it("asks each subject's as_of question about a past fact that exists and is not the current one", () => {
    const past = pastIndexes();
    expect(past.size).toBe(SUBJECTS.length);
    for (const s of SUBJECTS) {
      const k = past.get(s.id)!;
      expect(Number.isInteger(k) && k >= 0 && k < s.facts.length - 1, s.id).toBe(true);
      expect(s.facts[k]).toBeTruthy();
    }
    // More than one past position is asked about where subjects have 3 or 4 facts.
    expect(new Set(SUBJECTS.filter((s) => s.facts.length > 2).map((s) => past.get(s.id))).size).toBeGreaterThan(1);
  });

  it('flags a superseded fact at defaults, and an as_of answer from the future, as broken promises', () => {
    const summary = (over: Partial<KindSummary>): KindSummary => ({
      questions: 61, currentFirst: 0, currentInTop: 0, staleInTop: 0, currentEmpty: 0, asOfFirst: 0, asOfOlderInTop: 0, asOfNewerInTop: 0, asOfEmpty: 0,
      currentFirstWas: { expected: 0, 'older fact': 0, 'newer fact': 0, 'near-duplicate': 0, 'other memory': 0, 'no hit': 0 }, ...over,
    });
    const run = (arm: 'add-only' | 'supersede', s: KindSummary): EmbedderRunResult => ({
      embedder: 'hashing', modelId: 'hashing', via: 'core', preflight: [],
      defaults: { semantic: { threshold: 0.7 }, hybrid: { threshold: 0.7, semanticWeight: 0.7, keywordWeight: 0.3, rerank: true }, fields: { asOf: 'as_of', includeExpired: 'include_expired', supersedes: 'supersedes' } },
      arms: [{ arm, workspace: arm, writeSeconds: 0, memories: 0, kinds: [{ kind: 'hybrid', summary: s, results: [], meanMs: 0 }] }],
    });
    expect(violations(run('add-only', summary({ staleInTop: 30, asOfOlderInTop: 10 })))).toEqual([]);
    expect(violations(run('supersede', summary({ staleInTop: 1 })))).toHaveLength(1);
    expect(violations(run('add-only', summary({ asOfNewerInTop: 1 })))).toHaveLength(1);
  });
});
