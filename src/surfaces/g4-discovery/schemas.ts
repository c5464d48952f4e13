import { Type } from 'typebox';
import { AsOfField, IncludeExpiredField, ValidityMarker, ValidityWireFields } from '../http-kit/validity.ts';

/**
 * Wire schemas of G4 (`/v1/search`, `/v1/search/vector`, `/v1/search/suggestions`, `/v1/embeddings`). They describe
 * the shapes for OpenAPI and catch wrong types; the routes add the rules JSON Schema cannot say (blank text,
 * non-finite numbers, date order, metadata filter values) and every problem is reported at once.
 */

export const MAX_QUERY_CHARS = 10_000;
export const VECTOR_DIMENSIONS = 1536;
export const MAX_SEARCH_LIMIT = 50;
export const MAX_SEARCH_OFFSET = 1000;
export const MAX_SUGGESTION_LIMIT = 20;
export const MAX_FILTER_TAGS = 100;

/** Defaults, also declared in the schemas (AJV fills them in; the routes fall back to them for the types' sake). */
export const DEFAULTS = { limit: 10, offset: 0, threshold: 0.7, suggestionLimit: 5 } as const;

const Threshold = Type.Optional(Type.Number({
  minimum: 0, maximum: 1, default: 0.7,
  description: 'Lowest similarity_score a result may have, 0.0-1.0: the calibrated similarity (docs/api.md, "Scores"), where 0.7 means relevant',
}));
const MetadataFilter = Type.Object({}, {
  additionalProperties: true,
  description: 'Each key (dotted for nested keys) must match: a string (or number, boolean) equals, an array of them means any of them',
});
const Metadata = Type.Object({}, { additionalProperties: true, description: 'The memory\'s free-form metadata' });

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'The search text (not blank, at most 10000 characters)' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: 10, description: 'Results per page, 1-50' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEARCH_OFFSET, default: 0, description: 'Results to skip, 0-1000 (pagination)' })),
  similarity_threshold: Threshold,
  tags: Type.Optional(Type.String({ description: 'Comma-separated; a memory matches when it has any of them' })),
  created_after: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; inclusive lower bound on created_at' })),
  created_before: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; inclusive upper bound on created_at' })),
  include_content: Type.Optional(Type.Boolean({ default: false, description: 'true adds the full text as `content`' })),
  highlight: Type.Optional(Type.Boolean({ default: true, description: 'false gives `highlights: []`' })),
  metadata_filter: Type.Optional(Type.String({
    description: 'URL-encoded JSON object, for clients that cannot send a body with GET; the same as the JSON body {"metadata_filter": {...}}',
  })),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

export const VectorBody = Type.Object({
  vector: Type.Array(Type.Number(), {
    minItems: VECTOR_DIMENSIONS, maxItems: VECTOR_DIMENSIONS,
    description: 'Exactly 1536 finite numbers, e.g. an embedding from POST /v1/embeddings (not all zeros)',
  }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: 10, description: 'Results per page, 1-50' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEARCH_OFFSET, default: 0, description: 'Results to skip, 0-1000 (pagination)' })),
  similarity_threshold: Threshold,
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    maxItems: MAX_FILTER_TAGS, description: 'A memory matches when it has any of them',
  })),
  metadata_filter: Type.Optional(MetadataFilter),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

export const SuggestionsQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'The partial text typed so far' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SUGGESTION_LIMIT, default: 5, description: '1-20' })),
  type: Type.Optional(Type.Enum(['query', 'tag', 'title'], {
    default: 'query',
    description: 'query: past searches starting with q; tag: tags starting with q; title: memory titles containing q',
  })),
  as_of: Type.Optional(Type.String({
    description: 'Mnemo extension (tag and title): ISO 8601 date or date-time; suggest from the memories valid then (and created by then). Default: now',
  })),
  include_expired: Type.Optional(Type.Boolean({
    description: 'Mnemo extension (tag and title): true suggests from every memory, holding or not. Default false',
  })),
});

export const EmbeddingBody = Type.Object({
  text: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'Text to embed (not blank, at most 10000 characters and 8192 tokens)' }),
  model: Type.Optional(Type.String({ description: 'Default mnemo-embed-1536; mnemo-embed-768 is deprecated' })),
});

const Meta = Type.Object({ timestamp: Type.String(), request_id: Type.String() });
export const ok = <T extends object>(data: T) => Type.Object({ success: Type.Literal(true), data, meta: Meta });

const Pagination = Type.Object({
  total: Type.Integer({ description: 'Every memory at or above the threshold' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  has_more: Type.Boolean({ description: 'offset + results.length < total' }),
});

/** Present only when the request gave as_of or include_expired (a spec request sees the spec's item). */
const LifecycleFields = {
  valid_from: Type.Optional(ValidityWireFields.valid_from),
  valid_until: Type.Optional(ValidityWireFields.valid_until),
  superseded_by: Type.Optional(ValidityWireFields.superseded_by),
  version: Type.Optional(ValidityWireFields.version),
  validity: Type.Optional(ValidityMarker),
};

export const SemanticItemWire = Type.Object({
  id: Type.String(),
  title: Type.String(),
  content_preview: Type.String({ description: 'The content cut at about 200 characters on a word boundary, with … when cut' }),
  content: Type.Optional(Type.String({ description: 'The full content; only with include_content=true' })),
  similarity_score: Type.Number({ description: 'The calibrated similarity (docs/api.md, "Scores"), 0..1' }),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  highlights: Type.Array(Type.String(), { description: 'HTML-escaped snippets with matched words in <mark>…</mark>' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  ...LifecycleFields,
});

export const VectorItemWire = Type.Object({
  id: Type.String(),
  title: Type.String(),
  content_preview: Type.String(),
  similarity_score: Type.Number({ description: 'The calibrated similarity (docs/api.md, "Scores"), 0..1' }),
  vector_distance: Type.Number({ description: '1 - cosine (0 = same direction)' }),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  created_at: Type.String(),
  ...LifecycleFields,
});

export const ErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
  }),
  meta: Meta,
});

export const Responses = {
  search: ok(Type.Object({
    query: Type.String(),
    results: Type.Array(SemanticItemWire),
    pagination: Pagination,
    search_metadata: Type.Object({
      query_time_ms: Type.Number(),
      embedding_model: Type.String({ description: 'The model whose vectors the search compared (the configured embedder\'s id)' }),
      embedding_dimensions: Type.Integer({ description: 'Mnemo extension: that model\'s dimensions' }),
      similarity_threshold: Type.Number(),
    }),
  })),
  vector: ok(Type.Object({
    results: Type.Array(VectorItemWire),
    pagination: Pagination,
    search_metadata: Type.Object({
      query_time_ms: Type.Number(),
      similarity_threshold: Type.Number(),
      distance_metric: Type.Literal('cosine'),
    }),
  })),
  suggestions: ok(Type.Object({
    query: Type.String(),
    suggestions: Type.Array(Type.Object({
      text: Type.String(),
      type: Type.String(),
      frequency: Type.Integer(),
      score: Type.Number({ description: '0.6 * frequency / highest frequency + 0.4 * (1 when text starts with q, else 0.5)' }),
    })),
  })),
  embedding: ok(Type.Object({
    text: Type.String(),
    embedding: Type.Array(Type.Number()),
    model: Type.String(),
    token_count: Type.Integer(),
    dimensions: Type.Integer(),
  })),
};
