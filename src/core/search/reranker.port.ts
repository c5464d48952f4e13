/**
 * The port to a cross-encoder reranker: a `/rerank` endpoint as TEI, Jina, Cohere and llama.cpp's server expose it
 * (adapters/rerank). Hybrid search hands it its top candidates and reorders them by its scores.
 */
export interface RerankScore {
  /** Position of the document in the request. */
  index: number;
  /** The reranker's relevance, mapped to [0, 1] (a logistic for servers that answer raw logits). */
  score: number;
}

/**
 * Why a rerank failed, so that a caller warns once per kind: no answer in time, the server unreachable or failing
 * (network, 429, 5xx), the server refusing the request (other 4xx: a wrong key, model or URL), or an answer that is
 * not a valid score for every document.
 */
export type RerankFailure = 'timeout' | 'unavailable' | 'refused' | 'bad_answer';

export class RerankError extends Error {
  readonly kind: RerankFailure;

  constructor(message: string, options: { kind: RerankFailure; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RerankError';
    this.kind = options.kind;
  }
}

export interface Reranker {
  /** The model named to the server; empty when none is configured (the server's own). */
  readonly model: string;
  /**
   * Scores every document against the query (one score per index, in index order); throws RerankError when it
   * cannot, or rejects with `signal`'s reason once `signal` aborts.
   */
  rerank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<RerankScore[]>;
}
