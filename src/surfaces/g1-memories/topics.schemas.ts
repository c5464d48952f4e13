import { Type } from 'typebox';
import { ErrorWire, MemoryWire } from './schemas.ts';

/** Wire schemas of `/api/v1/topics` (served with G1's envelope and `X-API-Key`). */

const Metadata = Type.Object({}, { additionalProperties: true });
const TopicId = Type.String({ description: 'Topic UUID' });

/** What @lanonasis/memory-client sends: color and icon (kept as metadata keys), parent_topic_id (= parent_id). */
const ClientTopicFields = {
  color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: '#RRGGBB; kept as metadata.color' })),
  icon: Type.Optional(Type.String({ maxLength: 50, description: 'Kept as metadata.icon' })),
  parent_topic_id: Type.Optional(Type.Union([TopicId, Type.Null()], { description: 'Client name of parent_id (give one of them)' })),
};

export const TopicCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, description: 'Unique among the topics under the same parent' }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  parent_id: Type.Optional(Type.Union([TopicId, Type.Null()], { description: 'Parent topic, for a hierarchy' })),
  metadata: Type.Optional(Metadata),
  ...ClientTopicFields,
});

export const TopicUpdateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  parent_id: Type.Optional(Type.Union([TopicId, Type.Null()], { description: 'null makes it a root topic' })),
  metadata: Type.Optional(Metadata),
  ...ClientTopicFields,
});

export const TopicParams = Type.Object({ id: TopicId });

export const TopicListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  include_hierarchy: Type.Boolean({ default: false, description: 'true: the whole tree (roots with nested children), no paging' }),
});

export const TopicMemoriesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  sortBy: Type.Enum(['created_at', 'updated_at', 'title'], { default: 'created_at' }),
  sortOrder: Type.Enum(['asc', 'desc'], { default: 'desc' }),
});

const topicFields = {
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  parent_id: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  memory_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  // The client's names (beside the fields above): parent_topic_id = parent_id, color and icon from metadata.
  parent_topic_id: Type.Union([Type.String(), Type.Null()]),
  color: Type.Optional(Type.String()),
  icon: Type.Optional(Type.String()),
  user_id: Type.String({ description: 'Who created it' }),
  is_system: Type.Boolean({ description: 'Always false (Mnemo has no system topics)' }),
};
export const TopicWire = Type.Object(topicFields);
// Children nest to any depth; below the first level they are passed through as plain objects.
const TopicNodeWire = Type.Object({ ...topicFields, children: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))) });

const pagination = Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), hasMore: Type.Boolean() });

export const TopicResponses = {
  one: Type.Object({ success: Type.Literal(true), data: TopicWire, ...topicFields }, { description: 'The topic in data, and its fields at the top level too (as @lanonasis/memory-client reads it)' }),
  list: Type.Union([
    Type.Object({ success: Type.Literal(true), data: Type.Array(TopicNodeWire, { description: 'children is present (and filled) only with include_hierarchy=true' }), pagination: Type.Optional(pagination) }),
    Type.Array(TopicNodeWire, { description: 'With the header X-Project-Scope (sent by @lanonasis/memory-client): the topics as a bare array' }),
  ]),
  deleted: Type.Object({ success: Type.Literal(true), message: Type.String(), data: Type.Object({ id: Type.String(), deleted_at: Type.String() }) }),
  memories: Type.Object({
    success: Type.Literal(true), data: Type.Array(MemoryWire), pagination,
    topic: TopicWire, memories: Type.Array(MemoryWire), total_memories: Type.Integer(),
    subtopics: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), memory_count: Type.Integer() })),
  }),
  error: ErrorWire,
};
