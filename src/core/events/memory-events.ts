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

/**
 * `reason`: `user_request` for a delete call, `batch` for a G6 delete operation, `forget` for a forget
 * (`POST /api/v1/memories/forget`). Built with the memory's tags and metadata, which webhook filters read when the
 * event is fanned out (in its own transaction); the log keeps only `forgottenEventData` of it (`storedEventData`):
 * the memory is gone, and what it held goes with it. So every reader of the log — stream replays and live frames,
 * G8 resume, webhook deliveries and their retries — gets `{object, id, workspace, deleted_at, deleted_by, reason,
 * forgotten: true}`, the spec's G8 fields.
 */
export function memoryDeleted(m: Memory, at: Date, by: string, reason: string): NewEvent {
  return {
    id: newEventId(), type: 'memory.deleted', scope: scopeOf(m), createdAt: at,
    data: { object: 'memory', id: m.id, workspace: m.scope.workspace, tags: m.tags, metadata: m.metadata, deleted_at: isoTimestamp(at), deleted_by: by, reason },
  };
}

/**
 * A memory replaced by another (supersession, docs/memory-lifecycle.md): `m` as it is after, with its valid_until and
 * superseded_by set. No content: receivers have the successor's memory.created (or read it).
 */
export function memorySuperseded(m: Memory, by: string, at: Date, actor: string): NewEvent {
  return {
    id: newEventId(), type: 'memory.superseded', scope: scopeOf(m), createdAt: at,
    data: {
      object: 'memory', id: m.id, workspace: m.scope.workspace, superseded_by: by,
      valid_from: isoTimestamp(m.validFrom), valid_until: m.validUntil ? isoTimestamp(m.validUntil) : null,
      superseded_at: isoTimestamp(at), superseded_by_user: actor, tags: m.tags,
    },
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

/** Events about one memory, and the field of their data that names it (events.memory_id; migration 18 filled it so). */
const MEMORY_ID_FIELD: Readonly<Record<string, string>> = {
  'memory.created': 'id', 'memory.updated': 'id', 'memory.deleted': 'id', 'memory.superseded': 'id',
  'embedding.generated': 'memory_id',
};

/**
 * The memory an event is about, or null: what the stores keep in events.memory_id on append, so that forgetting a
 * memory finds its events (by index) and rewrites them to `forgottenEventData`.
 */
export function eventMemoryId(type: string, data: Record<string, unknown>): string | null {
  const field = MEMORY_ID_FIELD[type];
  const id = field === undefined ? undefined : data[field];
  return typeof id === 'string' ? id : null;
}

/**
 * The fields of each memory event that hold nothing the memory said: times, who (user ids), ids, the change flags,
 * the embedding's model. Title, content, tags, metadata, memory_type and topic_id are never among them (a type or a
 * tag can be as telling as a sentence).
 */
const KEPT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'memory.created': ['created_at', 'created_by'],
  'memory.updated': ['created_at', 'updated_at', 'updated_by'],
  'memory.deleted': ['deleted_at', 'deleted_by', 'reason'],
  'memory.superseded': ['superseded_by', 'valid_from', 'valid_until', 'superseded_at', 'superseded_by_user'],
  'embedding.generated': ['model', 'dimensions', 'trigger', 'generated_at'],
};

/**
 * What a stored event of a forgotten memory keeps (docs/events.md, "Forgotten memories"): `object`, the memory's id
 * (`id`, or `memory_id` for embedding.generated), `workspace`, the type's non-content fields (KEPT_FIELDS; for
 * memory.updated, `changes` as its three booleans) and `forgotten: true`. Never title, content, tags, metadata,
 * memory_type or topic_id. Idempotent: forgetting again changes nothing. Events of other types keep only `object`
 * and `forgotten` (no store rewrites them: only events with a memory id are found).
 */
export function forgottenEventData(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keep = (field: string) => {
    if (Object.hasOwn(data, field) && data[field] !== undefined) out[field] = data[field];
  };
  keep('object');
  keep(MEMORY_ID_FIELD[type] ?? 'id');
  keep('workspace');
  for (const field of KEPT_FIELDS[type] ?? []) keep(field);
  const changes = data.changes;
  if (type === 'memory.updated' && typeof changes === 'object' && changes !== null) {
    const c = changes as Record<string, unknown>;
    out.changes = { content: c.content === true, metadata: c.metadata === true, tags: c.tags === true };
  }
  out.forgotten = true;
  return out;
}

/**
 * `forgottenEventData` of a stored payload as a store reads it (any JSON, or null when unreadable): the memory's id
 * is kept whatever the payload held, so the event still says which memory it was about.
 */
export function forgottenStoredData(type: string, data: unknown, memoryId: string): Record<string, unknown> {
  const object = typeof data === 'object' && data !== null && !Array.isArray(data) ? data as Record<string, unknown> : {};
  const kept = forgottenEventData(type, object);
  const idField = MEMORY_ID_FIELD[type] ?? 'id';
  if (typeof kept[idField] !== 'string') kept[idField] = memoryId;
  return kept;
}

/**
 * What the event log keeps of an event as appended: a memory.deleted keeps `forgottenEventData` (its memory is
 * gone in the same transaction); every other event its data. The outbox fans out on the event as built (webhook
 * filters read a deleted memory's tags and metadata then) and stores this.
 */
export function storedEventData(e: Pick<NewEvent, 'type' | 'data'>): Record<string, unknown> {
  return e.type === 'memory.deleted' ? forgottenEventData(e.type, e.data) : e.data;
}
