import { Type } from 'typebox';
import { AsOfField, IncludeExpiredField, ValidityMarker, ValidityWireFields } from '../http-kit/validity.ts';
import { HYBRID_DEFAULT_THRESHOLD } from '../../core/search/relevance.ts';

/**
 * Wire schemas of G3 (`/api/v1/search`, `/hybrid`, `/batch`). They describe the shapes for validation and
 * OpenAPI; rules beyond shape (blank query, dates, metadata keys, namespace vs header, weight pairs) live in
 * requests.ts, and both sets of problems are reported together.
 */

export const MAX_BATCH_SEARCHES = 20;
export const EMBEDDING_WIDTH = 1536;

const NonEmpty = Type.String({ minLength: 1 });
const ValueList = Type.Array(NonEmpty, { minItems: 1, maxItems: 100 });

export const Filters = Type.Object({
  type: Type.Optional(Type.Union([NonEmpty, ValueList], {
    description: 'A memory type, or an array of types (any of them)',
  })),
  tags: Type.Optional(Type.Union([
    ValueList,
    Type.Object({
      $in: Type.Optional(ValueList),
      $all: Type.Optional(ValueList),
    }, { additionalProperties: false, minProperties: 1 }),
  ], {
    description: 'An array of tags (memories having any of them), `{"$in": [...]}` (any of them) or `{"$all": [...]}` (every one of them)',
  })),
  date: Type.Optional(Type.Object({
    $gte: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; created at or after (inclusive)' })),
    $lte: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; created at or before (inclusive; a date alone means the whole UTC day)' })),
  }, { additionalProperties: false, description: 'Range on the creation time' })),
}, {
  additionalProperties: true,
  description: 'Every other key is a metadata filter: a string, number or boolean (equality) or an array of them (any of). '
    + 'Nested metadata by dotted keys (`"source.kind": "web"`). Unknown `$` operators are a 400.',
});

const Query = Type.String({ minLength: 1, maxLength: 10_000, description: '1-10000 characters, not blank' });
// Fields with a default are optional on the wire (the validator fills the default in).
const TopK = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Most matches returned (1-100)' }));
const Namespace = Type.String({
  description: 'The workspace searched (same as the X-Workspace-ID header; default `default`). Giving both with different values is a 400.',
});
const IncludeMetadata = Type.Optional(Type.Boolean({ default: true, description: 'false omits `metadata` from every match' }));
const IncludeEmbedding = Type.Boolean({ description: 'true adds `embedding`, the stored vector zero-padded to 1536 numbers (default false)' });
const IncludeVector = Type.Boolean({
  deprecated: true,
  description: 'Deprecated alias of includeEmbedding; answers carry `Deprecation: true`',
});

export const SearchBody = Type.Object({
  query: Query,
  topK: TopK,
  filters: Type.Optional(Filters),
  includeMetadata: IncludeMetadata,
  includeEmbedding: Type.Optional(IncludeEmbedding),
  includeVector: Type.Optional(IncludeVector),
  threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Lowest score, the calibrated similarity (docs/api.md, "Scores"): 0.7 = relevant' })),
  namespace: Type.Optional(Namespace),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

export const HybridBody = Type.Object({
  query: Query,
  semanticWeight: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Weight of the semantic similarity (0-1)' })),
  keywordWeight: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.3, description: 'Weight of the keyword (BM25) score (0-1); not both weights 0' })),
  topK: TopK,
  rerank: Type.Optional(Type.Boolean({
    default: true,
    description: 'The keyword part of the weighted sum. true: the memory\'s coverage of the query (the share of its words\' weight the memory holds); false: the BM25 score relative to the best keyword hit',
  })),
  filters: Type.Optional(Filters),
  includeMetadata: IncludeMetadata,
  includeEmbedding: Type.Optional(IncludeEmbedding),
  includeVector: Type.Optional(IncludeVector),
  threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: HYBRID_DEFAULT_THRESHOLD, description: 'Lowest relevance, on the calibrated scale of every threshold (docs/api.md, "/hybrid"): the similarity raised by keyword coverage; 0.7 = relevant, 0 = no floor' })),
  namespace: Type.Optional(Namespace),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

export const BatchItem = Type.Object({
  query: Query,
  topK: TopK,
  filters: Type.Optional(Filters),
  threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Lowest score, the calibrated similarity (docs/api.md, "Scores"): 0.7 = relevant' })),
  as_of: Type.Optional(Type.String({ description: 'Mnemo extension: as the batch-wide as_of, for this search only' })),
  include_expired: Type.Optional(Type.Boolean({ description: 'Mnemo extension: as the batch-wide include_expired, for this search only' })),
}, { description: 'One semantic search; a bad item gets an `error` in its result slot while the others run' });

export const BatchBody = Type.Object({
  searches: Type.Array(BatchItem, { minItems: 1, maxItems: MAX_BATCH_SEARCHES, description: `1-${MAX_BATCH_SEARCHES} searches, run concurrently` }),
  namespace: Type.Optional(Namespace),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

const FieldProblems = Type.Array(Type.Object({ field: Type.String(), message: Type.String() }));

const Metadata = Type.Object({}, { additionalProperties: true, description: "The memory's metadata" });

export const MatchWire = Type.Object({
  id: Type.String(),
  score: Type.Number({ description: '/search: the calibrated similarity (docs/api.md, "Scores"); /hybrid: the fused score, 0..1, or the reranker\'s score when one is configured (docs/api.md, "Reranking"); 6 decimals' }),
  title: Type.String({ description: "Mnemo extension: the memory's title" }),
  text: Type.String({ description: "The memory's content" }),
  metadata: Type.Optional(Metadata),
  highlights: Type.Array(Type.String(), { description: 'Snippets with the matched words in <mark>…</mark>; the rest HTML-escaped' }),
  embedding: Type.Optional(Type.Array(Type.Number(), {
    description: 'With includeEmbedding: 1536 numbers, the stored vector zero-padded (absent when no vector of the current model is stored)',
  })),
  ...ValidityWireFields,
  validity: Type.Optional(ValidityMarker),
});

const Ms = (description: string) => Type.Number({ description: `${description}, in milliseconds (0.01 ms precision)` });

export const SearchResponse = Type.Object({
  matches: Type.Array(MatchWire),
  total: Type.Integer({ description: 'Memories at or above the threshold; matches holds at most topK of them' }),
  query_embedding_time: Ms('Time spent embedding the query'),
  search_time: Ms('Time spent searching after embedding'),
});

export const HybridResponse = Type.Object({
  matches: Type.Array(MatchWire),
  semantic_results: Type.Integer({ description: 'Memories in scope (after filters) whose similarity is at or above the threshold: every memory with a vector when none is given' }),
  keyword_results: Type.Integer({ description: 'Memories matching at least one query word' }),
  combined_score_method: Type.String({ description: '`weighted_sum(calibrated_similarity, keyword_coverage)` (rerank true) or `weighted_sum(calibrated_similarity, keyword_relevance/best)` (rerank false); docs/api.md, "Scores"; `cross_encoder(<model>) over …` when a reranker ordered the matches (docs/api.md, "Reranking")' }),
  total: Type.Integer({ description: 'Pooled candidates (the semantic best topK and the keyword pool) whose relevance is at or above the threshold; with a reranker, those of the reranked best N it kept (docs/api.md, "Reranking")' }),
  query_embedding_time: Ms('Time spent embedding the query'),
  search_time: Ms('Time spent searching after embedding'),
});

export const ErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  details: FieldProblems,
});

export const BatchResponse = Type.Object({
  results: Type.Array(Type.Object({
    query: Type.Union([Type.String(), Type.Null()], { description: 'The query as sent (null when it was not a string)' }),
    matches: Type.Array(MatchWire),
    error: Type.Optional(ErrorBody),
  }), { description: 'One per search, in input order' }),
  total_time: Ms('Time for the whole batch'),
});

export const ErrorWire = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: FieldProblems,
    request_id: Type.String(),
  }),
});
