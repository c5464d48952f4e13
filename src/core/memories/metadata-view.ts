import type { Memory, Metadata } from './memory.types.ts';

/**
 * A memory's metadata as the shapes that carry the memory type and tags inside `metadata` show it (G2, whose writes
 * accept `metadata.type` and `metadata.tags` and keep them as the memory type and tags; G3 and G4, whose results
 * have no `memory_type` field). The type and tags are the memory's own, whichever surface wrote it.
 */
export const metadataWithTypeAndTags = (m: Pick<Memory, 'metadata' | 'memoryType' | 'tags'>): Metadata & { type: string; tags: string[] } =>
  ({ ...m.metadata, type: m.memoryType, tags: m.tags });
