/**
 * The embeddings port. An embedder turns texts into vectors of its native width; every stored vector records
 * the `modelId` that produced it, and vectors of different models are never compared.
 */
export interface Embedder {
  /** Stable id of the model and its width, e.g. `local:use-lite-512`; stored with every vector. */
  readonly modelId: string;
  /** Native vector width. */
  readonly dimensions: number;
  /**
   * One vector per text, in input order. Empty or whitespace-only text yields the zero vector without calling the
   * model (some models throw on empty input).
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Releases workers, sockets and similar; safe to call twice. */
  close(): Promise<void>;
}

export interface EmbedOptions {
  /**
   * Someone is waiting for these vectors now (a search's query): an embedder that queues texts for a model it runs
   * itself serves them before the texts queued for writes, so that a search does not wait for an ingest to finish
   * (bounded, so that steady searches slow writes down but cannot stop them).
   */
  urgent?: boolean;
}

export class EmbeddingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}

export const isBlank = (text: string): boolean => text.trim().length === 0;
