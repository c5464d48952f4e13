import type { Memory } from '../../../core/memories/memory.types.ts';
import type { KeyMode } from '../../../core/scope.ts';

/** A `memories` row as SQLite returns it (`SELECT m.*`): JSON in text columns, times as epoch milliseconds. */
export interface MemoryRow {
  seq: number; id: string; client_id: string | null; tenant_id: string; mode: string; workspace: string; title: string; content: string;
  memory_type: string; tags: string; metadata: string; topic_id: string | null; created_at: number;
  updated_at: number; created_by: string; updated_by: string; access_count: number; last_accessed: number | null;
}

/** The domain memory of a row (the repository and the maintenance reads share it). */
export const toMemory = (r: MemoryRow): Memory => ({
  id: r.id,
  clientId: r.client_id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  title: r.title,
  content: r.content,
  memoryType: r.memory_type,
  tags: JSON.parse(r.tags) as string[],
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  topicId: r.topic_id,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  accessCount: r.access_count,
  lastAccessed: r.last_accessed === null ? null : new Date(r.last_accessed),
});
