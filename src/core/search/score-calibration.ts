/**
 * Similarity scores calibrated per embedding model (docs/api.md, "Scores"), so that the spec's default threshold 0.7
 * means "relevant" whichever model is configured. The one place where a cosine becomes a public score and a public
 * threshold becomes a cosine: storage ports and adapters speak cosines only, every surface the score. Models differ
 * in where a relevant match's cosine lies: the bundled USE-lite puts a paraphrased question and its answer near
 * 0.3–0.5 and unrelated text near 0.1–0.35, so `(1 + cosine) / 2 >= 0.7` (cosine >= 0.4) drops half of the right
 * answers.
 *
 * A calibration is one number per model, the cosine at which a match starts to count as relevant (`relevantCosine`),
 * and the score is piecewise linear in the cosine through (−1, 0), (relevantCosine, 0.7) and (1, 1): monotone (the
 * ranking is the model's own), in 0..1, and the identity `(1 + cosine) / 2` when relevantCosine is 0.4. Models
 * without a measured calibration (the hashing embedder, OpenAI-compatible servers) keep that identity.
 *
 * How `relevantCosine` was chosen: `npm run bench:calibration` (data: test/fixtures/paraphrase-set.json, method in
 * docs/architecture.md).
 */
export const RELEVANT_SCORE = 0.7;
const IDENTITY_COSINE = 0.4;

/** Measured calibrations by model id (`npm run bench:calibration` prints the figure for the configured model). */
export const MEASURED_RELEVANT_COSINE: Readonly<Record<string, number>> = {
  // USE-lite: the cosine below which ≥ 80 % of the calibration half's unrelated questions fall
  // (see docs/architecture.md, "Scores").
  'local:use-lite-512': 0.35,
};

export interface ScoreCalibration {
  /** The cosine that scores {@link RELEVANT_SCORE}. */
  readonly relevantCosine: number;
  /** Cosine -> score in 0..1. */
  score(cosine: number): number;
  /** The lowest cosine whose score is >= `score` (score in 0..1). */
  minCosine(score: number): number;
}

export function calibrationFor(modelId: string): ScoreCalibration {
  return scoreCalibration(MEASURED_RELEVANT_COSINE[modelId] ?? IDENTITY_COSINE);
}

export function scoreCalibration(relevantCosine: number): ScoreCalibration {
  if (!(relevantCosine > -1 && relevantCosine < 1)) throw new RangeError(`relevantCosine must be in (-1, 1): ${relevantCosine}`);
  const c = relevantCosine;
  const lowSlope = RELEVANT_SCORE / (c + 1);
  const highSlope = (1 - RELEVANT_SCORE) / (1 - c);
  return {
    relevantCosine: c,
    score(cosine) {
      const x = cosine < -1 ? -1 : cosine > 1 ? 1 : cosine;
      const s = x <= c ? (x + 1) * lowSlope : RELEVANT_SCORE + (x - c) * highSlope;
      return s < 0 ? 0 : s > 1 ? 1 : s;
    },
    minCosine(score) {
      return score <= RELEVANT_SCORE ? score / lowSlope - 1 : c + (score - RELEVANT_SCORE) / highSlope;
    },
  };
}
