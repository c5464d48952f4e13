import { isoTimestamp } from '../../core/clock.ts';
import type { Memory, MemoryPatch, Metadata, NewMemoryInput } from '../../core/memories/memory.types.ts';
import type { ScoredHit } from '../../core/search/search.service.ts';
import type { RelatedMemory } from '../../core/memories/memory.service.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import { validityWire, writeValidity } from '../http-kit/validity.ts';

/** G1 wire <-> domain. */

interface TypeFields { memory_type?: string | undefined; type?: string | undefined }

/** `type` is an alias of `memory_type`; giving both with different values is an error. */
function memoryTypeOf(body: TypeFields, problems: FieldProblem[]): string | undefined {
  if (body.memory_type !== undefined && body.type !== undefined && body.memory_type !== body.type) {
    problems.push({ field: 'type', reason: 'invalid_value', message: 'must equal memory_type when both are given' });
  }
  return body.memory_type ?? body.type;
}

function throwIfAny(problems: FieldProblem[]): void {
  if (problems.length > 0) throw validationError(problems);
}

export interface CreateWire extends TypeFields {
  title: string; content: string; tags?: string[] | undefined; metadata?: object | undefined;
  topic_id?: string | null | undefined;
  /** Lifecycle (docs/memory-lifecycle.md): ISO 8601 times; valid_until null is open-ended (on update: reopens). */
  valid_from?: string | undefined; valid_until?: string | null | undefined;
  supersedes?: string[] | undefined;
}
export type UpdateWire = Partial<Omit<CreateWire, 'supersedes'>>;

export function toNewMemory(b: CreateWire): NewMemoryInput {
  const problems: FieldProblem[] = [];
  const input: NewMemoryInput = {
    title: b.title, content: b.content, memoryType: memoryTypeOf(b, problems), tags: b.tags, metadata: b.metadata as Metadata | undefined,
    topicId: b.topic_id, ...writeValidity(b, problems), supersedes: b.supersedes,
  };
  throwIfAny(problems);
  return input;
}

export function toPatch(b: UpdateWire): MemoryPatch {
  const problems: FieldProblem[] = [];
  const patch: MemoryPatch = {
    title: b.title, content: b.content, memoryType: memoryTypeOf(b, problems), tags: b.tags, metadata: b.metadata as Metadata | undefined,
    topicId: b.topic_id, ...writeValidity(b, problems),
  };
  throwIfAny(problems);
  return patch;
}

/** A near-duplicate of a written memory (`return_related`). */
export const toRelated = (r: RelatedMemory) => ({ id: r.id, title: r.title, similarity: round(r.similarity) });

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
  ...validityWire(m),
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
  ...validityWire(h.memory),
});

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** `a, b,,c` -> ['a', 'b', 'c']. */
export const splitList = (s: string | undefined): string[] | undefined => {
  if (s === undefined) return undefined;
  const parts = s.split(',').map((p) => p.trim()).filter(Boolean);
  return parts.length > 0 ? parts : undefined;
};
