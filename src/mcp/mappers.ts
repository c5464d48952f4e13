import type { Memory } from '../core/memories/memory.types.ts';
import type { ScoredHit } from '../core/search/search.service.ts';
import type { TopicNode, TopicWithCount } from '../core/topics/topic.service.ts';

/** A memory as the MCP tools show it: G1's field names (snake_case), so both read alike. */
export const toMemoryJson = (m: Memory, withAccess = false): Record<string, unknown> => ({
  id: m.id, title: m.title, content: m.content, memory_type: m.memoryType, tags: m.tags, metadata: m.metadata, topic_id: m.topicId,
  created_at: m.createdAt.toISOString(), updated_at: m.updatedAt.toISOString(),
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
