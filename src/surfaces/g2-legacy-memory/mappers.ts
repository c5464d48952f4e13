import { isoTimestamp } from '../../core/clock.ts';
import type { Embedder } from '../../core/embeddings/embedder.port.ts';
import { padVector, truncatePadded } from '../../core/embeddings/vectors.ts';
import type { Memory, Metadata, StoredVector } from '../../core/memories/memory.types.ts';
import { G2_VECTOR_DIMENSIONS } from './schemas.ts';
import { metadataWithTypeAndTags } from '../../core/memories/metadata-view.ts';

/** G2 wire <-> domain. */

/** The model id a supplied embedding is stored under when it is not the configured model's (padded) vector. */
export const CLIENT_VECTOR_MODEL = `client:${G2_VECTOR_DIMENSIONS}`;

/** G2 metadata as the core keeps it: `type` is the memory type, `tags` the tags, every other key metadata. */
export interface SplitMetadata {
  memoryType: string | undefined;
  tags: string[] | undefined;
  rest: Record<string, unknown>;
}

export function splitMetadata(metadata: Record<string, unknown>): SplitMetadata {
  const { type, tags, ...rest } = metadata;
  return {
    memoryType: typeof type === 'string' ? type : undefined,
    tags: Array.isArray(tags) ? tags as string[] : undefined,
    rest,
  };
}

/**
 * A supplied 1536-number embedding as stored: the configured model's vector when every number beyond the model's
 * native width is 0 (then it is searchable), else the whole vector under {@link CLIENT_VECTOR_MODEL}.
 */
export function storedVectorOf(embedding: readonly number[], embedder: Pick<Embedder, 'modelId' | 'dimensions'>): StoredVector {
  if (embedder.dimensions <= G2_VECTOR_DIMENSIONS) {
    const native = truncatePadded(embedding, embedder.dimensions);
    if (native) return { modelId: embedder.modelId, vector: native };
  }
  return { modelId: CLIENT_VECTOR_MODEL, vector: Float32Array.from(embedding) };
}

/**
 * The shortest decimal that reads back as the same 32-bit float: a supplied 0.1 is stored as the float nearest
 * 0.1 and is returned as 0.1, not 0.10000000149011612.
 */
export function shortestFloat32(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x === 0 ? 0 : x;
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(x.toPrecision(digits));
    if (Math.fround(candidate) === x) return candidate;
  }
  return Number(x.toPrecision(9));
}

/** A stored vector on the wire: padded to 1536 (a wider one, from a wider model, is shown whole). */
export function wireVector(v: Float32Array): number[] {
  const padded = v.length <= G2_VECTOR_DIMENSIONS ? padVector(v, G2_VECTOR_DIMENSIONS) : Array.from(v);
  return padded.map(shortestFloat32);
}

/**
 * The lifecycle metadata keys of G2 (docs/memory-lifecycle.md): G2 has no field of its own for them, so a write reads
 * `metadata.valid_from`, `metadata.valid_until` and (create only) `metadata.supersedes`, and keeps none of them as
 * metadata; `metadata.superseded_by`, which reads show, is dropped on writes (it changes only by a supersession).
 */
export const LIFECYCLE_METADATA_KEYS = ['valid_from', 'valid_until', 'supersedes', 'superseded_by'] as const;

/**
 * A memory's G2 metadata: the stored keys, `type` and `tags`, and the lifecycle keys that differ from a plain memory's
 * — `valid_from` when it is not the creation time, `valid_until` when set, `superseded_by` when replaced. A memory
 * written without them reads exactly as before.
 */
export function g2Metadata(m: Memory): Metadata & { type: string; tags: string[] } {
  return {
    ...metadataWithTypeAndTags(m),
    ...(m.validFrom.getTime() !== m.createdAt.getTime() ? { valid_from: isoTimestamp(m.validFrom) } : {}),
    ...(m.validUntil ? { valid_until: isoTimestamp(m.validUntil) } : {}),
    ...(m.supersededBy ? { superseded_by: `mem_${m.supersededBy}` } : {}),
  };
}

export const toWire = (m: Memory, legacyId: string, embedding: number[]) => ({
  id: legacyId,
  text: m.content,
  metadata: g2Metadata(m),
  embedding,
  created_at: isoTimestamp(m.createdAt),
  updated_at: isoTimestamp(m.updatedAt),
});

/**
 * The fields @lanonasis/memory-client reads from a memory (its MemoryEntry), added beside the spec's on every G2
 * answer that carries a memory. No `status`: the spec gives memories no state field, and G2 create and update use
 * `status` for `stored` / `updated` (docs/api.md lists the conflict).
 */
export const clientView = (m: Memory, legacyId: string) => ({
  id: legacyId,
  title: m.title,
  content: m.content,
  memory_type: m.memoryType,
  tags: m.tags,
  metadata: g2Metadata(m),
  topic_id: m.topicId,
  ...(typeof m.metadata.summary === 'string' ? { summary: m.metadata.summary } : {}),
  ...(typeof m.metadata.project_ref === 'string' ? { project_ref: m.metadata.project_ref } : {}),
  user_id: m.createdBy,
  access_count: m.accessCount,
  last_accessed: m.lastAccessed ? isoTimestamp(m.lastAccessed) : null,
  created_at: isoTimestamp(m.createdAt),
  updated_at: isoTimestamp(m.updatedAt),
});
