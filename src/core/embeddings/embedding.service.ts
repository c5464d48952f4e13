import { chargeQuota } from '../operations/quota.ts';
import type { Principal } from '../api-keys/api-key.types.ts';
import { DomainError, type FieldProblem } from '../errors.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import { EmbeddingError, isBlank, type Embedder } from './embedder.port.ts';
import type { TokenCounter } from './token-counter.port.ts';
import { padVector } from './vectors.ts';

/**
 * Embedding models as the API shows them. Every API model is the configured embedder's vectors zero-padded to a
 * fixed width (which preserves cosine exactly), so vectors from any of them compare with stored memories.
 */
export interface ApiModel {
  name: string;
  dimensions: number;
  /** Scheduled for removal (the spec's 768-dimension embeddings). */
  deprecated: boolean;
}

export const DEFAULT_G5_MODEL_DIMENSIONS = 1024;
export const DEFAULT_G4_MODEL_DIMENSIONS = 1536;
/** OpenAI's per-input limit; longer inputs are refused rather than silently cut. */
export const MAX_INPUT_TOKENS = 8192;
export const MAX_INPUTS = 256;

const CATALOG: readonly ApiModel[] = [
  { name: 'mnemo-embed-1024', dimensions: 1024, deprecated: false },
  { name: 'mnemo-embed-1536', dimensions: 1536, deprecated: false },
  { name: 'mnemo-embed-768', dimensions: 768, deprecated: true },
];

export interface EmbeddingResult {
  model: ApiModel;
  vectors: number[][];
  /** Tokens per input, counted with the documented tokenizer. */
  tokens: number[];
}

export type EmbeddingService = ReturnType<typeof createEmbeddingService>;

export function createEmbeddingService(deps: {
  embedder: Embedder;
  tokens: TokenCounter;
  maxEmbedChars: number;
  /** Embedding requests count against the caller's hourly embedding limit. */
  quota: Pick<LimitsService, 'embeddings'>;
}) {
  const { embedder, tokens } = deps;
  // A model narrower than the embedder's native width cannot be served.
  const models = CATALOG.filter((m) => m.dimensions >= embedder.dimensions);

  function resolveModel(name: string | undefined, defaultDimensions: number, field = 'model'): ApiModel {
    const model = name === undefined
      ? models.find((m) => m.dimensions === defaultDimensions)
      : models.find((m) => m.name === name);
    if (!model) {
      throw new DomainError('VALIDATION_FAILED', name === undefined ? 'No default embedding model at this width'
        : `Unknown model ${name}; available: ${models.map((m) => m.name).join(', ')}`, {
        fields: [{ field, reason: 'not_found', message: `must be one of: ${models.map((m) => m.name).join(', ')}` }],
        availableModels: models.map((m) => m.name),
      });
    }
    return model;
  }

  return {
    tokenizer: tokens.name,
    /** The model searches actually compare with (the API models are its vectors zero-padded). */
    nativeModel: { id: embedder.modelId, dimensions: embedder.dimensions },
    countTokens: (text: string) => tokens.count(text),
    models: () => models,
    resolveModel,

    /**
     * Embeds texts for the API on behalf of `caller`: one padded vector per text, in order, with token counts. The
     * cheap checks (count, blank texts) come first; then the request counts against the caller's embedding limit,
     * since counting tokens (in proportion to the texts) and embedding are work done whatever their outcome.
     */
    async embed(caller: Principal, texts: readonly string[], model: ApiModel, field = 'input'): Promise<EmbeddingResult> {
      const where = (i: number) => (texts.length === 1 && field === 'text' ? field : `${field}[${i}]`);
      const problems: FieldProblem[] = [];
      if (texts.length === 0) problems.push({ field, reason: 'empty', message: 'must not be empty' });
      if (texts.length > MAX_INPUTS) problems.push({ field, reason: 'too_many', message: `at most ${MAX_INPUTS} texts per request` });
      texts.forEach((text, i) => {
        if (isBlank(text)) problems.push({ field: where(i), reason: 'empty', message: 'must not be empty' });
      });
      if (problems.length > 0) throw new DomainError('VALIDATION_FAILED', 'Invalid embedding input', { fields: problems });
      await chargeQuota(deps.quota, 'embedding.create', caller);
      const counts: number[] = [];
      for (const [i, text] of texts.entries()) {
        const n = await tokens.count(text);
        if (n > MAX_INPUT_TOKENS) problems.push({ field: where(i), reason: 'too_long', message: `is ${n} tokens; at most ${MAX_INPUT_TOKENS}` });
        counts.push(n);
      }
      if (problems.length > 0) throw new DomainError('VALIDATION_FAILED', 'Invalid embedding input', { fields: problems });
      let vectors: Float32Array[];
      try {
        vectors = await embedder.embed(texts.map((t) => t.slice(0, deps.maxEmbedChars)));
      } catch (err) {
        if (err instanceof EmbeddingError) throw new DomainError('EMBEDDING_FAILED', `Embedding failed: ${err.message}`);
        throw err;
      }
      return { model, vectors: vectors.map((v) => padVector(v, model.dimensions)), tokens: counts };
    },
  };
}
