import { MEMORY_TYPE_PATTERN, type Memory, type MemoryVersion, type StoredVector } from './memory.types.ts';
import type { Topic } from '../topics/topic.types.ts';
import { WORKSPACE_PATTERN, type KeyMode, type Scope } from '../scope.ts';

/**
 * The `mnemo export` / `mnemo import` JSONL format (docs/operations.md): one JSON object per line. Line 1 is the
 * header `{"mnemo_export": 1, ...}`; then `kind: "topic"` lines, then `kind: "memory"` lines. Times are ISO 8601
 * (UTC, milliseconds); each vector is `{model, dims, f32}` with `f32` the base64 of its little-endian float32 values,
 * so vectors come back bit for bit.
 */
export const EXPORT_FORMAT_VERSION = 1;

export interface ExportHeader {
  mnemo_export: number;
  exported_at: string;
  filter: { tenant?: string; mode?: string; workspace?: string };
}

export interface WireVector { model: string; dims: number; f32: string }

export type ExportRecord =
  | { kind: 'topic'; topic: Topic }
  | { kind: 'memory'; memory: Memory; vectors: StoredVector[] }
  /** An earlier state of a memory (its kept history), after every memory line. */
  | { kind: 'version'; scope: Scope; version: MemoryVersion };

const iso = (d: Date): string => d.toISOString();

export function vectorToWire(v: StoredVector): WireVector {
  const bytes = Buffer.alloc(v.vector.length * 4);
  for (let i = 0; i < v.vector.length; i++) bytes.writeFloatLE(v.vector[i]!, i * 4);
  return { model: v.modelId, dims: v.vector.length, f32: bytes.toString('base64') };
}

export function topicLine(t: Topic): string {
  return JSON.stringify({
    kind: 'topic', id: t.id, tenant: t.scope.tenantId, mode: t.scope.mode, workspace: t.scope.workspace, name: t.name,
    description: t.description, parent_id: t.parentId, metadata: t.metadata, created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt), created_by: t.createdBy,
  });
}

export function memoryLine(m: Memory, vectors: readonly StoredVector[]): string {
  return JSON.stringify({
    kind: 'memory', id: m.id, client_id: m.clientId, tenant: m.scope.tenantId, mode: m.scope.mode,
    workspace: m.scope.workspace, title: m.title, content: m.content, memory_type: m.memoryType, tags: m.tags,
    metadata: m.metadata, topic_id: m.topicId, created_at: iso(m.createdAt), updated_at: iso(m.updatedAt),
    created_by: m.createdBy, updated_by: m.updatedBy, access_count: m.accessCount,
    last_accessed: m.lastAccessed === null ? null : iso(m.lastAccessed), valid_from: iso(m.validFrom),
    valid_until: m.validUntil === null ? null : iso(m.validUntil), superseded_by: m.supersededBy, version: m.version,
    vectors: vectors.map(vectorToWire),
  });
}

export function versionLine(scope: Scope, v: MemoryVersion): string {
  return JSON.stringify({
    kind: 'version', memory_id: v.memoryId, version: v.version, tenant: scope.tenantId, mode: scope.mode, workspace: scope.workspace,
    title: v.title, content: v.content, memory_type: v.memoryType, tags: v.tags, metadata: v.metadata, topic_id: v.topicId,
    valid_from: iso(v.validFrom), valid_until: v.validUntil === null ? null : iso(v.validUntil), written_at: iso(v.writtenAt),
    written_by: v.writtenBy, replaced_at: iso(v.replacedAt), replaced_by: v.replacedBy,
  });
}

/** A line that is not what the format says; `message` names the field. */
export class ExportLineError extends Error {}

type Obj = Record<string, unknown>;
const fail = (message: string): never => { throw new ExportLineError(message); };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, field: string, opts: { nullable?: boolean; pattern?: RegExp } = {}): string {
  const v = o[field];
  if (typeof v === 'string' && (!opts.pattern || opts.pattern.test(v))) return v;
  return fail(`${field} must be ${opts.pattern ? 'a valid' : 'a'} string${opts.nullable ? ' or null' : ''}`);
}
const strOrNull = (o: Obj, field: string): string | null => (o[field] === null ? null : str(o, field, { nullable: true }));

function time(o: Obj, field: string): Date {
  const v = o[field];
  const d = typeof v === 'string' ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) return fail(`${field} must be an ISO 8601 time`);
  return d;
}

function positive(o: Obj, field: string): number {
  const v = o[field];
  return Number.isSafeInteger(v) && (v as number) >= 1 ? v as number : fail(`${field} must be a whole number of at least 1`);
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/;

function scopeOf(o: Obj): Scope {
  const mode = o.mode;
  if (mode !== 'live' && mode !== 'test') fail('mode must be "live" or "test"');
  return { tenantId: str(o, 'tenant', { pattern: NAME }), mode: mode as KeyMode, workspace: str(o, 'workspace', { pattern: WORKSPACE_PATTERN }) };
}

function metadataOf(o: Obj): Record<string, unknown> {
  if (!isObj(o.metadata)) fail('metadata must be an object');
  return o.metadata as Record<string, unknown>;
}

function vectorFromWire(v: unknown, i: number): StoredVector {
  if (!isObj(v) || typeof v.model !== 'string' || v.model === '' || !Number.isSafeInteger(v.dims) || (v.dims as number) < 1
    || typeof v.f32 !== 'string') {
    return fail(`vectors[${i}] must be {model, dims, f32}`);
  }
  const bytes = Buffer.from(v.f32, 'base64');
  if (bytes.length !== (v.dims as number) * 4 || bytes.toString('base64') !== v.f32) fail(`vectors[${i}].f32 must be base64 of dims float32 values`);
  const vector = new Float32Array(v.dims as number);
  for (let k = 0; k < vector.length; k++) vector[k] = bytes.readFloatLE(k * 4);
  if (vector.some((x) => !Number.isFinite(x))) fail(`vectors[${i}] holds a value that is not a finite number`);
  return { modelId: v.model, vector };
}

/** The header line, or an ExportLineError. */
export function parseHeader(line: string): ExportHeader {
  let o: unknown;
  try { o = JSON.parse(line); } catch { return fail('not JSON'); }
  if (!isObj(o) || o.mnemo_export !== EXPORT_FORMAT_VERSION) {
    return fail(`the first line must be the header {"mnemo_export": ${EXPORT_FORMAT_VERSION}, ...} (is this a mnemo export?)`);
  }
  return o as unknown as ExportHeader;
}

/** One topic or memory line, checked field by field, or an ExportLineError. */
export function parseRecord(line: string): ExportRecord {
  let o: unknown;
  try { o = JSON.parse(line); } catch { return fail('not JSON'); }
  if (!isObj(o)) return fail('not a JSON object');
  if (o.kind === 'topic') {
    return {
      kind: 'topic',
      topic: {
        id: str(o, 'id'), scope: scopeOf(o), name: str(o, 'name'), description: strOrNull(o, 'description'),
        parentId: strOrNull(o, 'parent_id'), metadata: metadataOf(o), createdAt: time(o, 'created_at'),
        updatedAt: time(o, 'updated_at'), createdBy: str(o, 'created_by'),
      },
    };
  }
  if (o.kind === 'version') {
    if (!Array.isArray(o.tags) || o.tags.some((t) => typeof t !== 'string')) fail('tags must be an array of strings');
    return {
      kind: 'version', scope: scopeOf(o),
      version: {
        memoryId: str(o, 'memory_id'), version: positive(o, 'version'), title: str(o, 'title'), content: str(o, 'content'),
        memoryType: str(o, 'memory_type', { pattern: MEMORY_TYPE_PATTERN }), tags: o.tags as string[], metadata: metadataOf(o),
        topicId: strOrNull(o, 'topic_id'), validFrom: time(o, 'valid_from'),
        validUntil: o.valid_until === null ? null : time(o, 'valid_until'), writtenAt: time(o, 'written_at'),
        writtenBy: str(o, 'written_by'), replacedAt: time(o, 'replaced_at'), replacedBy: str(o, 'replaced_by'),
      },
    };
  }
  if (o.kind !== 'memory') return fail('kind must be "topic", "memory" or "version"');
  if (!Array.isArray(o.tags) || o.tags.some((t) => typeof t !== 'string')) fail('tags must be an array of strings');
  if (!Number.isSafeInteger(o.access_count) || (o.access_count as number) < 0) fail('access_count must be a whole number');
  if (!Array.isArray(o.vectors)) fail('vectors must be an array');
  const memory: Memory = {
    id: str(o, 'id'), clientId: strOrNull(o, 'client_id'), scope: scopeOf(o), title: str(o, 'title'), content: str(o, 'content'),
    memoryType: str(o, 'memory_type', { pattern: MEMORY_TYPE_PATTERN }), tags: o.tags as string[], metadata: metadataOf(o),
    topicId: strOrNull(o, 'topic_id'), createdAt: time(o, 'created_at'), updatedAt: time(o, 'updated_at'),
    createdBy: str(o, 'created_by'), updatedBy: str(o, 'updated_by'), accessCount: o.access_count as number,
    lastAccessed: o.last_accessed === null ? null : time(o, 'last_accessed'),
    // Exports made before validity existed: valid from creation, open, unversioned.
    validFrom: o.valid_from === undefined ? time(o, 'created_at') : time(o, 'valid_from'),
    validUntil: o.valid_until === undefined || o.valid_until === null ? null : time(o, 'valid_until'),
    supersededBy: o.superseded_by === undefined ? null : strOrNull(o, 'superseded_by'),
    version: o.version === undefined ? 1 : positive(o, 'version'),
  };
  if (memory.id === '') fail('id must not be empty');
  const vectors = (o.vectors as unknown[]).map(vectorFromWire);
  if (new Set(vectors.map((v) => v.modelId)).size !== vectors.length) fail('vectors must hold one vector per model');
  return { kind: 'memory', memory, vectors };
}
