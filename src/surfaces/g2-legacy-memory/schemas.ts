import { Type } from 'typebox';
import { CLIENT_ID_PATTERN } from '../../core/memories/memory.types.ts';

/**
 * Wire schemas of G2 (`/api/v1/memory`, the legacy single-record API). They describe the shapes for OpenAPI and
 * catch wrong types; the routes add the rules JSON Schema cannot say (a non-blank line of text, the memory-type
 * rule, tag rules, the embedding's width and float range, timestamps) and every problem is reported at once.
 */

/** The width of every embedding G2 accepts and returns (the configured model's vectors, zero-padded). */
export const G2_VECTOR_DIMENSIONS = 1536;

const Text = Type.String({
  description: 'The memory\'s text (its content). Must have a non-blank line: the title is derived from the first one '
    + '(whitespace collapsed, cut to 255 characters on a word boundary with "…"). At most MNEMO_MAX_CONTENT_BYTES (default 1 MiB) of UTF-8',
});

const ClientId = Type.String({
  pattern: CLIENT_ID_PATTERN.source,
  description: 'Optional id of your choosing: 1-128 of letters, digits, _ . : - (starting with a letter or digit), unique in '
    + 'your workspace. Without one the memory is known as mem_<uuid>',
});

const MetadataIn = Type.Object({
  type: Type.Optional(Type.String({
    description: 'The memory type: context (default), project, knowledge, reference, personal, workflow, or any other lowercase identifier of at most 64 characters',
  })),
  tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags; trimmed, duplicates dropped, at most 100 of 100 characters' })),
  source: Type.Optional(Type.String({ description: 'Where the memory came from (stored as given)' })),
  timestamp: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time (stored as given)' })),
  valid_from: Type.Optional(Type.String({
    description: 'Mnemo extension: ISO 8601 date or date-time from which the fact holds (default on create: now); the memory\'s '
      + 'validity, not stored as metadata (docs/memory-lifecycle.md)',
  })),
  valid_until: Type.Optional(Type.Union([Type.String(), Type.Null()], {
    description: 'Mnemo extension: ISO 8601 date or date-time until which the fact holds (exclusive); null on update reopens it. '
      + 'Past it, list and search leave the memory out. Not stored as metadata',
  })),
  supersedes: Type.Optional(Type.Array(Type.String(), {
    description: 'Mnemo extension, create only: ids (yours, mem_<uuid> or UUIDs) of memories this one replaces, in the same write. Not stored as metadata',
  })),
}, {
  additionalProperties: true,
  description: 'type and tags are the memory\'s type and tags; valid_from, valid_until and supersedes its lifecycle '
    + '(superseded_by, which reads show, is ignored on writes); every other key (source, timestamp, anything else) is stored '
    + 'as the memory\'s metadata (at most 16 levels and 64 KiB as JSON)',
});

/** What @lanonasis/memory-client sends beside the spec's fields (docs/api.md, "G2 and @lanonasis/memory-client"). */
const ClientFields = {
  content: Type.Optional(Type.String({ description: 'Client name of `text` (give one of them, not both). On update it replaces the content and keeps the title' })),
  title: Type.Optional(Type.String({ description: 'At most 255 characters, not blank; without it the title is derived from the text' })),
  memory_type: Type.Optional(Type.String({ description: 'Overrides metadata.type' })),
  tags: Type.Optional(Type.Array(Type.String(), { description: 'Overrides metadata.tags' })),
  topic_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'A topic of this workspace (null on update removes it)' })),
  summary: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], { description: 'Kept as metadata.summary' })),
  project_ref: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Kept as metadata.project_ref' })),
};

export const CreateBody = Type.Object({
  text: Type.Optional(Text),
  ...ClientFields,
  id: Type.Optional(ClientId),
  metadata: Type.Optional(MetadataIn),
  embedding: Type.Optional(Type.Array(Type.Number(), {
    description: `Optional precomputed embedding: exactly ${G2_VECTOR_DIMENSIONS} finite numbers (32-bit float range). When every `
      + 'number beyond the server model\'s native width is 0 it is stored as that model\'s vector and is searchable; '
      + 'otherwise it is stored and returned as given but not compared by semantic search',
  })),
});

export const UpdateBody = Type.Object({
  text: Type.Optional(Text),
  ...ClientFields,
  status: Type.Optional(Type.String({ description: 'Accepted for the client: only `active` (memories have no states)' })),
  metadata: Type.Optional(Type.Object(MetadataIn.properties, {
    additionalProperties: true,
    description: 'Replaces the whole metadata: type (default context), tags (default none) and every other key',
  })),
}, { description: 'At least one of text and metadata. A changed text re-derives the title and re-embeds the memory' });

export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, description: 'Your id, mem_<uuid>, or the bare UUID' }),
});

const MetadataOut = Type.Object({
  type: Type.String({ description: 'The memory type' }),
  tags: Type.Array(Type.String()),
}, {
  additionalProperties: true,
  description: 'The stored metadata keys plus type and tags; plus valid_from (when not the creation time), valid_until (when set) '
    + 'and superseded_by (mem_<uuid> of the memory that replaced it), when they apply (docs/memory-lifecycle.md)',
});

/** The memory fields the client reads, on every G2 answer that carries a memory (beside the spec's). */
const ClientView = {
  title: Type.String(),
  content: Type.String({ description: 'Same as text' }),
  memory_type: Type.String(),
  tags: Type.Array(Type.String()),
  topic_id: Type.Union([Type.String(), Type.Null()]),
  summary: Type.Optional(Type.String()),
  project_ref: Type.Optional(Type.String()),
  user_id: Type.String({ description: 'The user id of the key that created it' }),
  access_count: Type.Integer(),
  last_accessed: Type.Union([Type.String(), Type.Null()]),
};
const ClientViewWithTimes = { ...ClientView, metadata: Type.Object({}, { additionalProperties: true }), created_at: Type.String(), updated_at: Type.String() };

export const MemoryWire = Type.Object({
  ...ClientView,
  id: Type.String({ description: 'Your id when you gave one, else mem_<uuid>' }),
  text: Type.String(),
  metadata: MetadataOut,
  embedding: Type.Array(Type.Number(), {
    description: `${G2_VECTOR_DIMENSIONS} numbers: the stored vector (zero-padded model vector, or the embedding you supplied), `
      + 'each the shortest decimal of its 32-bit float',
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const Responses = {
  created: Type.Object({
    ...ClientViewWithTimes,
    id: Type.String({ description: 'Your id when you gave one, else mem_<uuid>' }),
    status: Type.Literal('stored'),
    embedding_generated: Type.Boolean({ description: 'false when you supplied the embedding' }),
    vector_dimensions: Type.Integer({ description: `Always ${G2_VECTOR_DIMENSIONS}` }),
    tokens_used: Type.Integer({ description: 'Tokens of text (cl100k_base) when the server embedded it; 0 when you supplied the embedding' }),
  }),
  memory: MemoryWire,
  updated: Type.Object({
    ...ClientViewWithTimes,
    id: Type.String(),
    status: Type.Literal('updated'),
    embedding_regenerated: Type.Boolean({ description: 'true exactly when the text changed' }),
  }),
  deleted: Type.Object({
    success: Type.Literal(true),
    deleted_id: Type.String({ description: 'The id G2 knows the memory by' }),
  }),
};

export const ErrorWire = Type.Object({
  error: Type.String({ description: 'INVALID_REQUEST, UNAUTHORIZED, PERMISSION_DENIED, NOT_FOUND, CONFLICT, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, RATE_LIMITED, SERVICE_UNAVAILABLE, INTERNAL_ERROR' }),
  message: Type.String(),
  details: Type.Object({}, {
    additionalProperties: true,
    description: 'INVALID_REQUEST: {missing_fields: [name], invalid_fields: [{field, message}]}; RATE_LIMITED: {limit, remaining, reset_at, limit_type}',
  }),
  retry_after: Type.Optional(Type.Integer({ description: 'RATE_LIMITED only: seconds to wait (also the Retry-After header)' })),
  request_id: Type.String(),
});
