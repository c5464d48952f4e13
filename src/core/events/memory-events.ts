import { isoTimestamp } from '../clock.ts';
import { prefixedId } from '../ids.ts';
import type { Memory, StoredVector } from '../memories/memory.types.ts';
import type { SearchLogEntry } from '../search/search-log.ts';
import type { NewEvent } from './event.types.ts';

/**
 * Payloads of the events the memory operations emit (docs/events.md lists which operation emits which).
 * Field names follow the spec's G8 table, plus a few more that receivers need (title, memory_type, workspace).
 */
export const newEventId = (): string => prefixedId('evt', 24);

const scopeOf = (m: Memory) => ({ tenantId: m.scope.tenantId, mode: m.scope.mode, workspace: m.scope.workspace });

const memoryFields = (m: Memory) => ({
  object: 'memory',
  id: m.id,
  title: m.title,
  content: m.content,
  memory_type: m.memoryType,
  metadata: m.metadata,
  tags: m.tags,
  topic_id: m.topicId,
  workspace: m.scope.workspace,
});

export function memoryCreated(m: Memory): NewEvent {
  return {
    id: newEventId(), type: 'memory.created', scope: scopeOf(m), createdAt: m.createdAt,
    data: { ...memoryFields(m), created_at: isoTimestamp(m.createdAt), created_by: m.createdBy },
  };
}

export interface MemoryChanges { content: boolean; metadata: boolean; tags: boolean }

export function memoryUpdated(m: Memory, changes: MemoryChanges): NewEvent {
  return {
    id: newEventId(), type: 'memory.updated', scope: scopeOf(m), createdAt: m.updatedAt,
    data: { ...memoryFields(m), created_at: isoTimestamp(m.createdAt), updated_at: isoTimestamp(m.updatedAt), updated_by: m.updatedBy, changes },
  };
}

/** `reason`: `user_request` for a delete call, `batch` for a G6 delete operation. */
export function memoryDeleted(m: Memory, at: Date, by: string, reason: string): NewEvent {
  return {
    id: newEventId(), type: 'memory.deleted', scope: scopeOf(m), createdAt: at,
    data: { object: 'memory', id: m.id, workspace: m.scope.workspace, tags: m.tags, metadata: m.metadata, deleted_at: isoTimestamp(at), deleted_by: by, reason },
  };
}

/** Emitted whenever Mnemo computes a memory's vector (create, or an update of title or content). */
export function embeddingGenerated(m: Memory, vector: StoredVector, trigger: 'memory.created' | 'memory.updated', at: Date): NewEvent {
  return {
    id: newEventId(), type: 'embedding.generated', scope: scopeOf(m), createdAt: at,
    data: {
      object: 'embedding', memory_id: m.id, model: vector.modelId, dimensions: vector.vector.length, trigger,
      workspace: m.scope.workspace, generated_at: isoTimestamp(at),
    },
  };
}

export function searchPerformed(e: SearchLogEntry): NewEvent {
  return {
    id: newEventId(), type: 'search.performed', scope: { ...e.scope }, createdAt: e.at,
    data: {
      object: 'search', query: e.query, kind: e.kind, surface: e.surface, results_count: e.resultsCount,
      execution_time: Math.round(e.executionMs * 100) / 100, user_id: e.userId, timestamp: isoTimestamp(e.at),
      filters: e.filters, workspace: e.scope.workspace,
    },
  };
}
