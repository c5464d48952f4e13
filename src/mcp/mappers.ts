import type { ChainLink, MemoryHistory, RelatedMemory } from '../core/memories/memory.service.ts';
import type { Memory, MemoryTombstone, MemoryVersion } from '../core/memories/memory.types.ts';
import type { ScoredHit } from '../core/search/search.service.ts';
import type { TopicNode, TopicWithCount } from '../core/topics/topic.service.ts';

/** A memory as the MCP tools show it: G1's field names (snake_case), so both read alike. */
export const toMemoryJson = (m: Memory, withAccess = false): Record<string, unknown> => ({
  id: m.id, title: m.title, content: m.content, memory_type: m.memoryType, tags: m.tags, metadata: m.metadata, topic_id: m.topicId,
  created_at: m.createdAt.toISOString(), updated_at: m.updatedAt.toISOString(),
  valid_from: m.validFrom.toISOString(), valid_until: m.validUntil?.toISOString() ?? null, superseded_by: m.supersededBy, version: m.version,
  ...(withAccess ? { access_count: m.accessCount, last_accessed: m.lastAccessed?.toISOString() ?? null } : {}),
});

const round = (x: number | undefined): number | null => (x === undefined ? null : Math.round(x * 1e6) / 1e6);

/** A search hit: the memory and its scores (similarity and keyword relevance where the mode has them). */
export const toSearchHitJson = (h: ScoredHit): Record<string, unknown> => ({
  ...toMemoryJson(h.memory), score: round(h.score), similarity_score: round(h.similarity), keyword_score: round(h.keywordScore),
});

export const toTopicJson = (t: TopicWithCount | TopicNode): Record<string, unknown> => ({
  id: t.id, name: t.name, description: t.description, parent_id: t.parentId, metadata: t.metadata, memory_count: t.memoryCount,
  created_at: t.createdAt.toISOString(), updated_at: t.updatedAt.toISOString(),
  ...('children' in t ? { children: t.children.map(toTopicJson) } : {}),
});

/** A near-duplicate of a memory just written (memory_create's `related`). */
export const toRelatedJson = (r: RelatedMemory): Record<string, unknown> => ({ id: r.id, title: r.title, similarity: round(r.similarity) });

/** An earlier state of a memory (memory_history): as it was written, and the update that replaced it. */
export const toVersionJson = (v: MemoryVersion): Record<string, unknown> => ({
  version: v.version, title: v.title, content: v.content, memory_type: v.memoryType, tags: v.tags, metadata: v.metadata, topic_id: v.topicId,
  valid_from: v.validFrom.toISOString(), valid_until: v.validUntil?.toISOString() ?? null,
  written_at: v.writtenAt.toISOString(), written_by: v.writtenBy, replaced_at: v.replacedAt.toISOString(), replaced_by: v.replacedBy,
});

const toChainLinkJson = (l: ChainLink): Record<string, unknown> => ({
  id: l.id, title: l.title, valid_from: l.validFrom.toISOString(), valid_until: l.validUntil?.toISOString() ?? null,
});

const toTombstoneJson = (t: MemoryTombstone): Record<string, unknown> => ({
  id: t.memoryId, deleted_at: t.deletedAt.toISOString(), deleted_by: t.deletedBy, reason: t.reason,
});

/** A memory's history: the memory now (or its tombstone), a page of its kept versions, and its supersession chain. */
export const toHistoryJson = (h: MemoryHistory, page: { limit: number; offset: number }): Record<string, unknown> => ({
  memory: h.memory === null ? null : toMemoryJson(h.memory),
  tombstone: h.tombstone === null ? null : toTombstoneJson(h.tombstone),
  versions: h.versions.map(toVersionJson), total: h.total, limit: page.limit, offset: page.offset,
  has_more: page.offset + h.versions.length < h.total,
  chain: { supersedes: h.chain.supersedes.map(toChainLinkJson), superseded_by: h.chain.supersededBy.map(toChainLinkJson) },
});
