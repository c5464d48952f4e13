import type { Memory, MemoryTombstone, MemoryVersion } from '../../../core/memories/memory.types.ts';
import type { KeyMode } from '../../../core/scope.ts';

/** A `memories` row as SQLite returns it (`SELECT m.*`): JSON in text columns, times as epoch milliseconds. */
export interface MemoryRow {
  seq: number; id: string; client_id: string | null; tenant_id: string; mode: string; workspace: string; title: string; content: string;
  memory_type: string; tags: string; metadata: string; topic_id: string | null; created_at: number;
  updated_at: number; created_by: string; updated_by: string; access_count: number; last_accessed: number | null;
  valid_from: number; valid_until: number | null; superseded_by: string | null; version: number;
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
  validFrom: new Date(r.valid_from),
  validUntil: r.valid_until === null ? null : new Date(r.valid_until),
  supersededBy: r.superseded_by,
  version: r.version,
});

/** The columns every insert of a memory writes, in the named parameters of {@link memoryParams}. */
export const INSERT_MEMORY_SQL = `INSERT INTO memories
    (id, client_id, tenant_id, mode, workspace, title, content, memory_type, tags, metadata, topic_id, created_at, updated_at,
     created_by, updated_by, access_count, last_accessed, content_hash, valid_from, valid_until, superseded_by, version)
    VALUES (@id, @client_id, @tenant_id, @mode, @workspace, @title, @content, @memory_type, @tags, @metadata, @topic_id,
     @created_at, @updated_at, @created_by, @updated_by, @access_count, @last_accessed, @content_hash, @valid_from,
     @valid_until, @superseded_by, @version)`;

/** A memory as the named parameters of {@link INSERT_MEMORY_SQL}. */
export const memoryParams = (m: Memory, contentHash: string) => ({
  id: m.id, client_id: m.clientId, tenant_id: m.scope.tenantId, mode: m.scope.mode, workspace: m.scope.workspace, title: m.title,
  content: m.content, memory_type: m.memoryType, tags: JSON.stringify(m.tags), metadata: JSON.stringify(m.metadata),
  topic_id: m.topicId, created_at: m.createdAt.getTime(), updated_at: m.updatedAt.getTime(),
  created_by: m.createdBy, updated_by: m.updatedBy, access_count: m.accessCount,
  last_accessed: m.lastAccessed?.getTime() ?? null, content_hash: contentHash,
  valid_from: m.validFrom.getTime(), valid_until: m.validUntil?.getTime() ?? null, superseded_by: m.supersededBy,
  version: m.version,
});

/** A `memory_versions` row. */
export interface MemoryVersionRow {
  memory_id: string; version: number; tenant_id: string; mode: string; workspace: string; title: string; content: string;
  memory_type: string; tags: string; metadata: string; topic_id: string | null; valid_from: number; valid_until: number | null;
  written_at: number; written_by: string; replaced_at: number; replaced_by: string;
}

export const toMemoryVersion = (r: MemoryVersionRow): MemoryVersion => ({
  memoryId: r.memory_id,
  version: r.version,
  title: r.title,
  content: r.content,
  memoryType: r.memory_type,
  tags: JSON.parse(r.tags) as string[],
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  topicId: r.topic_id,
  validFrom: new Date(r.valid_from),
  validUntil: r.valid_until === null ? null : new Date(r.valid_until),
  writtenAt: new Date(r.written_at),
  writtenBy: r.written_by,
  replacedAt: new Date(r.replaced_at),
  replacedBy: r.replaced_by,
});

/** A `memory_tombstones` row. */
export interface MemoryTombstoneRow {
  memory_id: string; tenant_id: string; mode: string; workspace: string; deleted_at: number; deleted_by: string; reason: string;
}

export const toMemoryTombstone = (r: MemoryTombstoneRow): MemoryTombstone => ({
  memoryId: r.memory_id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  deletedAt: new Date(r.deleted_at),
  deletedBy: r.deleted_by,
  reason: r.reason,
});
