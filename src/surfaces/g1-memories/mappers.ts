import { isoTimestamp } from '../../core/clock.ts';
import type { Memory, MemoryPatch, Metadata, NewMemoryInput } from '../../core/memories/memory.types.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import { validationError } from '../../core/errors.ts';

/** G1 wire <-> domain. */

interface TypeFields { memory_type?: string | undefined; type?: string | undefined }

/** `type` is an alias of `memory_type`; giving both with different values is an error. */
function memoryTypeOf(body: TypeFields): string | undefined {
  if (body.memory_type !== undefined && body.type !== undefined && body.memory_type !== body.type) {
    throw validationError([{ field: 'type', reason: 'invalid_value', message: 'must equal memory_type when both are given' }]);
  }
  return body.memory_type ?? body.type;
}

export interface CreateWire extends TypeFields {
  title: string; content: string; tags?: string[] | undefined; metadata?: object | undefined;
  topic_id?: string | null | undefined;
}
export type UpdateWire = Partial<CreateWire>;

export const toNewMemory = (b: CreateWire): NewMemoryInput => ({
  title: b.title, content: b.content, memoryType: memoryTypeOf(b), tags: b.tags, metadata: b.metadata as Metadata | undefined,
  topicId: b.topic_id,
});

export const toPatch = (b: UpdateWire): MemoryPatch => ({
  title: b.title, content: b.content, memoryType: memoryTypeOf(b), tags: b.tags, metadata: b.metadata as Metadata | undefined,
  topicId: b.topic_id,
});

export const toWire = (m: Memory) => ({
  id: m.id,
  title: m.title,
  content: m.content,
  memory_type: m.memoryType,
  type: m.memoryType,
  tags: m.tags,
  metadata: m.metadata,
  topic_id: m.topicId,
  created_at: isoTimestamp(m.createdAt),
  updated_at: isoTimestamp(m.updatedAt),
});

export const toWireWithAccess = (m: Memory) => ({
  ...toWire(m),
  access_count: m.accessCount,
  last_accessed: m.lastAccessed ? isoTimestamp(m.lastAccessed) : null,
});

export const toSearchItem = (h: ScoredHit) => ({
  id: h.memory.id,
  title: h.memory.title,
  content: h.memory.content,
  memory_type: h.memory.memoryType,
  type: h.memory.memoryType,
  similarity_score: round(h.score),
  tags: h.memory.tags,
  metadata: h.memory.metadata,
});

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** `a, b,,c` -> ['a', 'b', 'c']. */
export const splitList = (s: string | undefined): string[] | undefined => {
  if (s === undefined) return undefined;
  const parts = s.split(',').map((p) => p.trim()).filter(Boolean);
  return parts.length > 0 ? parts : undefined;
};
