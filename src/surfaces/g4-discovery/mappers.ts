import { isoTimestamp } from '../../core/clock.ts';
import type { Suggestion } from '../../core/memories/memory.types.ts';
import { highlight } from '../../core/search/highlights.ts';
import type { SuggestionKind } from '../../core/search/search.service.ts';
import { parseTimestamp } from '../../core/search/filters.ts';
import type { FieldProblem } from '../../core/errors.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import { metadataWithTypeAndTags } from '../../core/memories/metadata-view.ts';
import { validityWire, type ReadValidity } from '../http-kit/validity.ts';
import type { Memory } from '../../core/memories/memory.types.ts';

/** A search's `search_metadata` model fields: the model whose vectors were compared, and its width. */
export const searchModel = (embeddings: Pick<EmbeddingService, 'nativeModel'>) => ({
  embedding_model: embeddings.nativeModel.id, embedding_dimensions: embeddings.nativeModel.dimensions,
});

/** G4 domain -> wire. */

export const PREVIEW_CHARS = 200;

/**
 * The content cut at about `max` characters: at the last space within the limit when there is one in its second
 * half (else exactly at the limit, never inside a surrogate pair), trailing space dropped, then `…`.
 */
export function contentPreview(content: string, max = PREVIEW_CHARS): string {
  if (content.length <= max) return content;
  let cut = max;
  const space = content.slice(0, max + 1).search(/\s\S*$/);
  if (space >= max / 2) cut = space;
  else if (/[\uD800-\uDBFF]/.test(content[cut - 1] ?? '')) cut -= 1;
  return `${content.slice(0, cut).trimEnd()}…`;
}

const round = (x: number, places: number): number => {
  const f = 10 ** places;
  return Math.round(x * f) / f + 0; // + 0 turns -0 into 0
};

export const roundScore = (x: number): number => round(x, 6);
export const roundMs = (x: number): number => round(x, 2);

export interface SemanticItemOptions { query: string; includeContent: boolean; highlight: boolean }

/** Highlights come from the content; when no query word occurs there, from the title. */
function highlightsOf(h: ScoredHit, query: string): string[] {
  const fromContent = highlight(h.memory.content, query);
  return fromContent.length > 0 ? fromContent : highlight(h.memory.title, query);
}

export const toSemanticItem = (h: ScoredHit, o: SemanticItemOptions) => ({
  id: h.memory.id,
  title: h.memory.title,
  content_preview: contentPreview(h.memory.content),
  ...(o.includeContent ? { content: h.memory.content } : {}),
  similarity_score: roundScore(h.similarity ?? h.score),
  tags: h.memory.tags,
  metadata: metadataWithTypeAndTags(h.memory),
  highlights: o.highlight ? highlightsOf(h, o.query) : [],
  created_at: isoTimestamp(h.memory.createdAt),
  updated_at: isoTimestamp(h.memory.updatedAt),
});

export const toVectorItem = (h: ScoredHit) => ({
  id: h.memory.id,
  title: h.memory.title,
  content_preview: contentPreview(h.memory.content),
  similarity_score: roundScore(h.similarity ?? h.score),
  vector_distance: roundScore(Math.max(0, 1 - (h.cosine ?? 0))),
  tags: h.memory.tags,
  metadata: metadataWithTypeAndTags(h.memory),
  created_at: isoTimestamp(h.memory.createdAt),
});

/**
 * What a G4 result adds when the request read by validity (as_of or include_expired given): the memory's lifecycle
 * fields and, with include_expired, its `validity`. A request without them gets the spec's item unchanged.
 */
export function lifecycleOf(requested: boolean, validity: Pick<ReadValidity, 'mark'>) {
  return (m: Memory) => (requested ? { ...validityWire(m), ...validity.mark(m) } : {});
}

/**
 * Scores suggestions in 0..1: `0.6 * frequency / highest frequency in the answer + 0.4 * (1 when the text starts
 * with q, case-insensitive, else 0.5)`, best first (ties: more frequent, then alphabetical), rounded to 4 places.
 */
export function scoreSuggestions(found: readonly Suggestion[], q: string, type: SuggestionKind) {
  const max = Math.max(1, ...found.map((s) => s.frequency));
  const prefix = q.trim().toLowerCase();
  return found
    .map((s) => ({
      text: s.text,
      type,
      frequency: s.frequency,
      score: round(0.6 * (s.frequency / max) + 0.4 * (s.text.toLowerCase().startsWith(prefix) ? 1 : 0.5), 4),
    }))
    .sort((a, b) => b.score - a.score || b.frequency - a.frequency || a.text.localeCompare(b.text));
}

/** `a, b,,c` -> ['a', 'b', 'c']; undefined when nothing is left. */
export const splitList = (s: string | undefined): string[] | undefined => {
  if (s === undefined) return undefined;
  const parts = [...new Set(s.split(',').map((p) => p.trim()).filter(Boolean))];
  return parts.length > 0 ? parts : undefined;
};

/** An ISO 8601 bound from the query string; a problem on `field` when it is not one. */
export function dateBound(value: unknown, field: string, problems: FieldProblem[]): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const d = parseTimestamp(value);
  if (!d) problems.push({ field, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time, e.g. 2026-01-31T12:00:00Z' });
  return d ?? undefined;
}
