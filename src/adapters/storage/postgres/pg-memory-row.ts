import { contentHash } from '../../../core/memories/content-hash.ts';
import type { Memory, MemoryTombstone, MemoryVersion } from '../../../core/memories/memory.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgJson, pgTime, pgTimeOrNull } from './pg-executor.ts';

/** A `memories` row as the adapter reads it (MEMORY_COLUMNS); times come back as Date from timestamptz. */
export interface MemoryRow {
  seq: number | string; id: string; client_id: string | null; tenant_id: string; mode: string; workspace: string;
  title: string; content: string; memory_type: string; tags: string[]; metadata: Record<string, unknown>;
  topic_id: string | null; created_at: Date; updated_at: Date; created_by: string; updated_by: string;
  access_count: number; last_accessed: Date | null; valid_from: Date; valid_until: Date | null; superseded_by: string | null;
  version: number;
}

/** Every column a read returns: all but the keyword index ones and the content hash, which only the database reads. */
export const MEMORY_COLUMNS: readonly string[] = ['seq', 'id', 'client_id', 'tenant_id', 'mode', 'workspace', 'title', 'content',
  'memory_type', 'tags', 'metadata', 'topic_id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'access_count',
  'last_accessed', 'valid_from', 'valid_until', 'superseded_by', 'version'];

/** MEMORY_COLUMNS of the alias `alias`, for a SELECT list. */
export const memoryColumns = (alias: string): string => MEMORY_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

export const toMemory = (r: MemoryRow): Memory => ({
  id: r.id,
  clientId: r.client_id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  title: r.title,
  content: r.content,
  memoryType: r.memory_type,
  tags: r.tags,
  metadata: r.metadata,
  topicId: r.topic_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  accessCount: r.access_count,
  lastAccessed: r.last_accessed,
  validFrom: r.valid_from,
  validUntil: r.valid_until,
  supersededBy: r.superseded_by,
  version: r.version,
});

/** The columns every insert of a memory writes, in the order of {@link memoryInsertValues}. */
export const MEMORY_INSERT_COLUMNS = 'id, client_id, tenant_id, mode, workspace, title, content, memory_type, tags, metadata, '
  + 'topic_id, created_at, updated_at, created_by, updated_by, access_count, last_accessed, content_hash, valid_from, '
  + 'valid_until, superseded_by, version';

/** `$1, …, $22`: the placeholders of MEMORY_INSERT_COLUMNS, with the casts their parameters need. */
export const MEMORY_INSERT_PLACEHOLDERS = ['$1', '$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9::text[]', '$10::jsonb', '$11',
  '$12::timestamptz', '$13::timestamptz', '$14', '$15', '$16', '$17::timestamptz', '$18', '$19::timestamptz',
  '$20::timestamptz', '$21', '$22'].join(', ');

/** A memory as the parameters of MEMORY_INSERT_COLUMNS. */
export const memoryInsertValues = (m: Memory): unknown[] => [
  m.id, m.clientId, m.scope.tenantId, m.scope.mode, m.scope.workspace, m.title, m.content, m.memoryType, m.tags,
  pgJson(m.metadata), m.topicId, pgTime(m.createdAt), pgTime(m.updatedAt), m.createdBy, m.updatedBy, m.accessCount,
  pgTimeOrNull(m.lastAccessed), contentHash(m.content), pgTime(m.validFrom), pgTimeOrNull(m.validUntil), m.supersededBy,
  m.version,
];

/**
 * The array types of MEMORY_INSERT_COLUMNS for `unnest`, one parameter per column whatever the number of rows: tags
 * (text[] per row, which a rectangular text[][] cannot hold) travel as JSON text, times as text, cast on the way in.
 */
const MEMORY_UNNEST_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text',
  'text', 'text', 'int', 'text', 'text', 'text', 'text', 'text', 'int'];
const MEMORY_INSERT_NAMES = MEMORY_INSERT_COLUMNS.split(', ');
const MEMORY_INSERT_CASTS: Readonly<Record<string, string>> = {
  tags: 'ARRAY(SELECT t.tag FROM jsonb_array_elements_text(x.tags::jsonb) WITH ORDINALITY AS t(tag, n) ORDER BY t.n)', metadata: 'x.metadata::jsonb',
  created_at: 'x.created_at::timestamptz', updated_at: 'x.updated_at::timestamptz', last_accessed: 'x.last_accessed::timestamptz',
  valid_from: 'x.valid_from::timestamptz', valid_until: 'x.valid_until::timestamptz',
};
/** `unnest($1::text[], …) WITH ORDINALITY AS x(<columns>, ord)`: rows of memories from {@link memoryInsertArrays}. */
export const MEMORY_UNNEST = `unnest(${MEMORY_UNNEST_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
  WITH ORDINALITY AS x(${MEMORY_INSERT_NAMES.join(', ')}, ord)`;
/** The SELECT list of MEMORY_INSERT_COLUMNS over MEMORY_UNNEST's `x`. */
export const MEMORY_UNNEST_SELECT = MEMORY_INSERT_NAMES.map((c) => MEMORY_INSERT_CASTS[c] ?? `x.${c}`).join(', ');
/** Memories as the column arrays of MEMORY_UNNEST ($1 … $22). */
export const memoryInsertArrays = (memories: readonly Memory[]): unknown[][] => {
  const rows = memories.map((m) => {
    const values = memoryInsertValues(m);
    values[8] = pgJson(m.tags);
    return values;
  });
  return MEMORY_INSERT_NAMES.map((_, c) => rows.map((r) => r[c]));
};

/** A `memory_versions` row. */
export interface MemoryVersionRow {
  memory_id: string; version: number; title: string; content: string; memory_type: string; tags: string[];
  metadata: Record<string, unknown>; topic_id: string | null; valid_from: Date; valid_until: Date | null;
  written_at: Date; written_by: string; replaced_at: Date; replaced_by: string;
}

export const VERSION_COLUMNS = 'memory_id, version, title, content, memory_type, tags, metadata, topic_id, valid_from, '
  + 'valid_until, written_at, written_by, replaced_at, replaced_by';

export const toMemoryVersion = (r: MemoryVersionRow): MemoryVersion => ({
  memoryId: r.memory_id,
  version: r.version,
  title: r.title,
  content: r.content,
  memoryType: r.memory_type,
  tags: r.tags,
  metadata: r.metadata,
  topicId: r.topic_id,
  validFrom: r.valid_from,
  validUntil: r.valid_until,
  writtenAt: r.written_at,
  writtenBy: r.written_by,
  replacedAt: r.replaced_at,
  replacedBy: r.replaced_by,
});

/** A `memory_tombstones` row. */
export interface MemoryTombstoneRow {
  memory_id: string; tenant_id: string; mode: string; workspace: string; deleted_at: Date; deleted_by: string; reason: string;
}

export const toMemoryTombstone = (r: MemoryTombstoneRow): MemoryTombstone => ({
  memoryId: r.memory_id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  deletedAt: r.deleted_at,
  deletedBy: r.deleted_by,
  reason: r.reason,
});
