import { describe, expect, it } from 'vitest';
import { calibrationFor, MEASURED_RELEVANT_COSINE, scoreCalibration } from '../../src/core/search/score-calibration.ts';

describe('score calibration', () => {
  it('is (1 + cosine) / 2 for a model without a measured calibration', () => {
    const cal = calibrationFor('hashing:v1-512');
    for (const c of [-1, -0.3, 0, 0.4, 0.77, 1]) expect(cal.score(c)).toBeCloseTo((1 + c) / 2, 12);
    expect(cal.minCosine(0.7)).toBeCloseTo(0.4, 12);
  });

  it('scores the model\'s relevant cosine 0.7, stays in 0..1, is monotone, and minCosine inverts it', () => {
    const cal = calibrationFor('local:use-lite-512');
    expect(cal.relevantCosine).toBe(MEASURED_RELEVANT_COSINE['local:use-lite-512']);
    expect(cal.score(cal.relevantCosine)).toBeCloseTo(0.7, 12);
    expect(cal.score(-1)).toBe(0);
    expect(cal.score(1)).toBe(1);
    expect(cal.score(-5)).toBe(0);
    expect(cal.score(5)).toBe(1);
    let last = -1;
    for (let c = -1; c <= 1; c += 0.01) {
      const s = cal.score(c);
      expect(s).toBeGreaterThanOrEqual(last);
      last = s;
    }
    for (const s of [0, 0.2, 0.6, 0.7, 0.85, 1]) expect(cal.score(cal.minCosine(s))).toBeCloseTo(s, 12);
  });

  it('refuses a relevant cosine outside (-1, 1)', () => {
    expect(() => scoreCalibration(1)).toThrow(RangeError);
    expect(() => scoreCalibration(-1)).toThrow(RangeError);
  });
});
