import { Type } from 'typebox';
import {
  AsOfField, IncludeExpiredField, ValidFromField, ValidityMarker, ValidityWireFields, ValidUntilField,
} from '../http-kit/validity.ts';

/** Wire schemas of G1 (`/api/v1/memories`). Field rules beyond shape live in the core. */

const Tags = Type.Array(Type.String(), { description: 'Tags; trimmed, duplicates dropped, at most 100 of 100 characters' });
const Metadata = Type.Object({}, { additionalProperties: true, description: 'Free-form object; values may be nested (at most 16 levels, 64 KiB as JSON)' });
const MemoryType = Type.String({
  description: 'context, project, knowledge, reference, personal, workflow, or any other lowercase identifier of at most 64 characters',
});
const ReturnRelated = Type.Boolean({
  description: 'Mnemo extension. true: the answer gains `related`, up to 5 memories of the workspace valid now that read nearly '
    + 'the same as the written one (calibrated similarity >= 0.85), best first. Nothing is superseded by it (docs/memory-lifecycle.md)',
});

export const CreateBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 255 }),
  content: Type.String({ minLength: 1, description: 'At most MNEMO_MAX_CONTENT_BYTES (default 1 MiB) of UTF-8' }),
  memory_type: Type.Optional(MemoryType),
  type: Type.Optional(Type.String({ description: 'Alias of memory_type' })),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
  topic_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Topic UUID' })),
  dedupe: Type.Optional(Type.Boolean({
    description: 'Mnemo extension. true: when this workspace already holds a memory with identical content (after NFC, '
      + 'trimming and collapsing whitespace), answer 200 with that memory and `deduplicated: true` instead of storing a second copy',
  })),
  valid_from: Type.Optional(ValidFromField),
  valid_until: Type.Optional(ValidUntilField),
  supersedes: Type.Optional(Type.Array(Type.String(), {
    maxItems: 100,
    description: 'Mnemo extension: full UUIDs of memories of this workspace that this one replaces, in the same write: each stops '
      + 'holding where this one starts (its valid_until becomes this valid_from, its superseded_by this id) and emits memory.superseded',
  })),
  return_related: Type.Optional(ReturnRelated),
});

export const UpdateBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  content: Type.Optional(Type.String({ minLength: 1 })),
  memory_type: Type.Optional(MemoryType),
  type: Type.Optional(Type.String({ description: 'Alias of memory_type' })),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
  topic_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  valid_from: Type.Optional(ValidFromField),
  valid_until: Type.Optional(ValidUntilField),
  return_related: Type.Optional(ReturnRelated),
});

export const IdParams = Type.Object({
  id: Type.String({ description: 'A full UUID or an unambiguous prefix of at least 8 characters' }),
});

export const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Items to skip; default 0, or (page - 1) × limit when page is given' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Mnemo extension: the page to answer, from 1 (give page or offset, not both)' })),
  type: Type.Optional(Type.String({ description: 'Only memories of this memory_type' })),
  tags: Type.Optional(Type.String({ description: 'Comma-separated; a memory matches when it has any of them' })),
  sortBy: Type.Enum(['created_at', 'updated_at', 'title'], { default: 'created_at' }),
  sortOrder: Type.Enum(['asc', 'desc'], { default: 'desc' }),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

export const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 10_000 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Lowest similarity_score, the calibrated similarity (docs/api.md, "Scores"): 0.7 = relevant' }),
  type: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], {
    description: 'Array (or comma-separated string); a memory matches when it has any of them',
  })),
  metadata: Type.Optional(Type.Unknown({
    description: 'Mnemo extension: only memories whose metadata matches every key (a value, or an array meaning any of them; '
      + 'dotted keys reach nested objects), as G3 `filters` do',
  })),
  as_of: Type.Optional(AsOfField),
  include_expired: Type.Optional(IncludeExpiredField),
});

const MemoryFields = {
  id: Type.String(),
  title: Type.String(),
  content: Type.String(),
  memory_type: Type.String(),
  type: Type.String(),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  topic_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  ...ValidityWireFields,
};

export const MemoryWire = Type.Object(MemoryFields);
/** A list item: a memory, marked when the list was read with include_expired. */
export const ListItemWire = Type.Object({ ...MemoryFields, validity: Type.Optional(ValidityMarker) });
export const MemoryWithAccessWire = Type.Object({
  ...MemoryFields,
  access_count: Type.Integer(),
  last_accessed: Type.Union([Type.String(), Type.Null()]),
});
export const SearchItemWire = Type.Object({
  id: Type.String(),
  title: Type.String(),
  content: Type.String(),
  memory_type: Type.String(),
  type: Type.String(),
  similarity_score: Type.Number({ description: 'The calibrated similarity (docs/api.md, "Scores"), 0..1' }),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  ...ValidityWireFields,
  validity: Type.Optional(ValidityMarker),
});

/** A near-duplicate of a written memory (`return_related`). */
export const RelatedWire = Type.Object({
  id: Type.String(),
  title: Type.String(),
  similarity: Type.Number({ description: 'The calibrated similarity to the written memory (docs/api.md, "Scores"), 0..1' }),
});
const Related = Type.Array(RelatedWire, {
  description: 'Only with return_related: true. Near-duplicates valid now, best first (at most 5); read each before superseding one',
});

const ok = <T extends object>(data: T) => Type.Object({ success: Type.Literal(true), data });

export const ErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    request_id: Type.String(),
    timestamp: Type.String(),
  }),
});

export const SimilarParams = Type.Object({ id: Type.String({ description: 'Full UUID or unambiguous prefix of at least 8 characters' }) });
export const SimilarQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.7, description: 'Lowest similarity_score, the calibrated similarity (docs/api.md, "Scores"), as G1 search: 0.7 = relevant' }),
});

export const Responses = {
  memory: ok(MemoryWire),
  updated: Type.Object({ success: Type.Literal(true), data: MemoryWire, related: Type.Optional(Related) }),
  created: Type.Object({
    success: Type.Literal(true),
    data: MemoryWire,
    deduplicated: Type.Optional(Type.Boolean({ description: 'Present when the request set dedupe: true; true when data is the memory already stored' })),
    related: Type.Optional(Related),
  }),
  similar: ok(Type.Object({
    memory_id: Type.String(),
    results: Type.Array(SearchItemWire),
    total: Type.Integer({ description: 'Other memories at or above the threshold; results holds at most limit of them' }),
    threshold: Type.Number(),
  })),
  memoryWithAccess: ok(MemoryWithAccessWire),
  deleted: Type.Object({
    success: Type.Literal(true),
    message: Type.String(),
    data: Type.Object({ id: Type.String(), deleted_at: Type.String() }),
  }),
  list: Type.Object({
    success: Type.Literal(true),
    data: Type.Array(ListItemWire),
    pagination: Type.Object({
      total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), hasMore: Type.Boolean(),
    }),
  }),
  search: ok(Type.Object({
    results: Type.Array(SearchItemWire),
    total: Type.Integer({ description: 'Memories at or above the threshold; results holds at most limit of them' }),
    query: Type.String(),
    threshold: Type.Number(),
  })),
};
