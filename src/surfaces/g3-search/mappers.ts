import { padVector } from '../../core/embeddings/vectors.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import { highlight } from '../../core/search/highlights.ts';
import { EMBEDDING_WIDTH } from './schemas.ts';
import { metadataWithTypeAndTags } from '../../core/memories/metadata-view.ts';
import { validityWire, type ReadValidity } from '../http-kit/validity.ts';
import type { ValidityState } from '../../core/memories/validity.ts';

/** G3 domain -> wire. */

export interface MatchOptions {
  includeMetadata: boolean;
  includeEmbedding: boolean;
  /** Marks each match (`validity`) when the search was read with include_expired. */
  validity: Pick<ReadValidity, 'mark'>;
}

export interface MatchWire {
  id: string;
  score: number;
  title: string;
  text: string;
  metadata?: Record<string, unknown>;
  highlights: string[];
  embedding?: number[];
  valid_from: string;
  valid_until: string | null;
  superseded_by: string | null;
  version: number;
  validity?: ValidityState;
}

/** Scores to 6 decimals. */
export const roundScore = (x: number): number => Math.round(x * 1e6) / 1e6;
/** Milliseconds to 0.01 ms. */
export const roundMs = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * One match: `text` is the memory's content, highlights are snippets of it around the query's words. The embedding
 * is the stored vector zero-padded to 1536 numbers; it is left out when no vector of the current model is stored
 * (or one wider than 1536, which cannot be shown at that width).
 */
export function toMatch(hit: ScoredHit, query: string, options: MatchOptions): MatchWire {
  const m = hit.memory;
  const match: Omit<MatchWire, keyof ReturnType<typeof validityWire>> = {
    id: m.id, score: roundScore(hit.score), title: m.title, text: m.content, highlights: highlight(m.content, query),
  };
  if (options.includeMetadata) match.metadata = metadataWithTypeAndTags(m);
  if (options.includeEmbedding && hit.vector && hit.vector.length <= EMBEDDING_WIDTH) {
    match.embedding = padVector(hit.vector, EMBEDDING_WIDTH);
  }
  return { ...match, ...validityWire(m), ...options.validity.mark(m) };
}
