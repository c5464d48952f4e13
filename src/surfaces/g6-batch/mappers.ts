import { isoTimestamp } from '../../core/clock.ts';
import type { BatchFailureCode, BatchOp, OpOutcome } from '../../core/batch/batch.types.ts';
import { DomainError, isDomainError, type DomainErrorCode, type FieldProblem } from '../../core/errors.ts';
import { titleFromText } from '../../core/memories/title.ts';
import type { Memory, MemoryFilter, Metadata } from '../../core/memories/memory.types.ts';
import { parseMetadataFilter } from '../../core/search/filters.ts';
import { wireFields } from '../http-kit/wire-fields.ts';
import { readValidity, validityWire, writeValidity } from '../http-kit/validity.ts';
import type { Clock } from '../../core/clock.ts';
import { validityMarker, type ValidityState } from '../../core/memories/validity.ts';

/** G6 wire <-> domain: each operation is parsed on its own, so one bad operation never sinks the others. */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function invalid(type: string, problems: FieldProblem[]): BatchOp {
  return { type, invalid: new DomainError('VALIDATION_FAILED', `Invalid ${type} operation`, { fields: problems }) };
}

function optionalString(o: Json, key: string, problems: FieldProblem[], prefix: string): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') problems.push({ field: `${prefix}${key}`, reason: 'invalid_type', message: 'must be a string' });
  return typeof v === 'string' ? v : undefined;
}

function memoryFields(data: Json, problems: FieldProblem[]) {
  const title = optionalString(data, 'title', problems, 'data.');
  const content = optionalString(data, 'content', problems, 'data.');
  const memoryType = optionalString(data, 'memory_type', problems, 'data.') ?? optionalString(data, 'type', problems, 'data.');
  if (data.tags !== undefined && !isStringArray(data.tags)) problems.push({ field: 'data.tags', reason: 'invalid_type', message: 'must be an array of strings' });
  if (data.metadata !== undefined && !isObject(data.metadata)) problems.push({ field: 'data.metadata', reason: 'invalid_type', message: 'must be an object' });
  const topicId = data.topic_id === null ? null : optionalString(data, 'topic_id', problems, 'data.');
  return {
    title, content, memoryType, topicId,
    tags: isStringArray(data.tags) ? data.tags : undefined,
    metadata: isObject(data.metadata) ? data.metadata as Metadata : undefined,
    // Lifecycle (docs/memory-lifecycle.md): ISO 8601 times; valid_until null is open-ended (on update: reopens).
    ...writeValidity(data, problems, 'data.'),
  };
}

/** `data.supersedes` of a create: full UUIDs of memories this one replaces (in the same write; the core checks them). */
function supersedesOf(data: Json, problems: FieldProblem[]): string[] | undefined {
  if (data.supersedes === undefined) return undefined;
  if (!isStringArray(data.supersedes)) {
    problems.push({ field: 'data.supersedes', reason: 'invalid_type', message: 'must be an array of memory ids' });
    return undefined;
  }
  return data.supersedes;
}

function searchFilter(raw: unknown, problems: FieldProblem[]): MemoryFilter {
  if (raw === undefined) return {};
  if (!isObject(raw)) {
    problems.push({ field: 'options.filters', reason: 'invalid_type', message: 'must be an object' });
    return {};
  }
  const { type, tags, ...metadata } = raw;
  const filter: MemoryFilter = {};
  if (type !== undefined) {
    if (typeof type === 'string') filter.types = [type];
    else if (isStringArray(type)) filter.types = type;
    else problems.push({ field: 'options.filters.type', reason: 'invalid_type', message: 'must be a string or an array of strings' });
  }
  if (tags !== undefined) {
    if (isStringArray(tags)) filter.tagsAny = tags;
    else problems.push({ field: 'options.filters.tags', reason: 'invalid_type', message: 'must be an array of strings' });
  }
  filter.metadata = parseMetadataFilter(metadata, problems, 'options.filters');
  return filter;
}

/**
 * One operation from the request. `clock`: "now" for the `validity` marker of a search with include_expired (the
 * marker is made when the result is rendered: see markerOf).
 */
export function toBatchOp(raw: unknown, clock: Pick<Clock, 'now'>): BatchOp {
  if (!isObject(raw)) return invalid('unknown', [{ field: 'operation', reason: 'invalid_type', message: 'must be an object' }]);
  const type = typeof raw.type === 'string' ? raw.type : 'unknown';
  const problems: FieldProblem[] = [];
  const id = () => {
    if (typeof raw.id !== 'string' || raw.id.length === 0) problems.push({ field: 'id', reason: 'required', message: 'is required (a string)' });
    return typeof raw.id === 'string' ? raw.id : '';
  };
  const data = () => {
    if (!isObject(raw.data)) problems.push({ field: 'data', reason: 'required', message: 'is required (an object)' });
    return isObject(raw.data) ? raw.data : {};
  };
  switch (type) {
    case 'create': {
      const d = data();
      const f = memoryFields(d, problems);
      const supersedes = supersedesOf(d, problems);
      if (f.content === undefined && !problems.some((p) => p.field === 'data.content')) problems.push({ field: 'data.content', reason: 'required', message: 'is required' });
      if (problems.length) return invalid(type, problems);
      return {
        type,
        input: {
          title: f.title ?? titleFromText(f.content!) ?? '', content: f.content!, memoryType: f.memoryType, tags: f.tags, metadata: f.metadata,
          topicId: f.topicId, validFrom: f.validFrom, validUntil: f.validUntil, supersedes,
        },
      };
    }
    case 'update': {
      const memoryId = id();
      const d = data();
      const f = memoryFields(d, problems);
      if (d.supersedes !== undefined) {
        problems.push({ field: 'data.supersedes', reason: 'not_allowed', message: 'is accepted on create only (supersede after the fact: POST /api/v1/memories/{id}/supersede)' });
      }
      if (problems.length) return invalid(type, problems);
      return {
        type, id: memoryId,
        patch: {
          title: f.title, content: f.content, memoryType: f.memoryType, tags: f.tags, metadata: f.metadata, topicId: f.topicId,
          validFrom: f.validFrom, validUntil: f.validUntil,
        },
      };
    }
    case 'read': {
      const memoryId = id();
      return problems.length ? invalid(type, problems) : { type, id: memoryId };
    }
    case 'delete': {
      const memoryId = id();
      return problems.length ? invalid(type, problems) : { type, id: memoryId };
    }
    case 'search': {
      if (typeof raw.query !== 'string' || raw.query.trim().length === 0) problems.push({ field: 'query', reason: 'required', message: 'is required (a non-empty string)' });
      const options = raw.options === undefined ? {} : raw.options;
      if (!isObject(options)) problems.push({ field: 'options', reason: 'invalid_type', message: 'must be an object' });
      const o = isObject(options) ? options : {};
      const limit = o.limit ?? 10;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100) problems.push({ field: 'options.limit', reason: 'out_of_range', message: 'must be an integer from 1 to 100' });
      const threshold = o.threshold ?? 0.7;
      if (typeof threshold !== 'number' || threshold < 0 || threshold > 1) problems.push({ field: 'options.threshold', reason: 'out_of_range', message: 'must be a number from 0 to 1' });
      const filter = searchFilter(o.filters, problems);
      const validity = readValidity(o, clock, problems, { asOf: 'options.as_of', includeExpired: 'options.include_expired' });
      if (problems.length) return invalid(type, problems);
      return { type, query: raw.query as string, limit: limit as number, threshold: threshold as number, filter, validity: validity.option };
    }
    default:
      return invalid(type, [{ field: 'type', reason: 'invalid_value', message: 'must be one of: create, read, update, delete, search' }]);
  }
}

const memoryWire = (m: Memory) => ({
  id: m.id, title: m.title, content: m.content, memory_type: m.memoryType, tags: m.tags, metadata: m.metadata,
  topic_id: m.topicId, created_at: isoTimestamp(m.createdAt), updated_at: isoTimestamp(m.updatedAt),
  access_count: m.accessCount, last_accessed: m.lastAccessed ? isoTimestamp(m.lastAccessed) : null,
  ...validityWire(m),
});

/** How a search operation's hits are marked: `validity` at its as_of (else now) when it asked for include_expired. */
export function markerOf(op: BatchOp, clock: Pick<Clock, 'now'>): (m: Memory) => { validity?: ValidityState } {
  if (op.type !== 'search' || !('validity' in op) || !op.validity) return () => ({});
  return validityMarker(op.validity, clock.now());
}

/** Every domain code as G6 shows it inside an operation's error (no status: the batch answers 200 or 207). */
export const OPERATION_ERROR_CODES = {
  VALIDATION_FAILED: 'VALIDATION_ERROR', NOT_FOUND: 'MEMORY_NOT_FOUND', TIMEOUT: 'SEARCH_TIMEOUT',
  UNAUTHENTICATED: 'UNAUTHORIZED', EMBEDDING_FAILED: 'EMBEDDING_FAILED', OVERLOADED: 'SERVICE_UNAVAILABLE',
  AMBIGUOUS_ID: 'AMBIGUOUS_ID', CONTENT_TOO_LARGE: 'CONTENT_TOO_LARGE', PERMISSION_DENIED: 'PERMISSION_DENIED',
  RATE_LIMITED: 'RATE_LIMITED', QUOTA_EXCEEDED: 'QUOTA_EXCEEDED', CONFLICT: 'CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
} as const satisfies Record<DomainErrorCode, string>;

/** A batch's own failure codes (not domain errors) are shown as they are. */
const operationErrorCode = (code: DomainErrorCode | BatchFailureCode): string =>
  (Object.hasOwn(OPERATION_ERROR_CODES, code) ? OPERATION_ERROR_CODES[code as DomainErrorCode] : code);

export function toResultEntry(o: OpOutcome, mark: (m: Memory) => { validity?: ValidityState } = () => ({})) {
  const base = { index: o.index, type: o.type, status: o.status, attempts: o.attempts };
  if (o.status === 'failed') {
    const e = o.error;
    const fields = isDomainError(e) ? e.details.fields : undefined;
    return { ...base, error: { code: operationErrorCode(e.code), message: e.message, details: fields && fields.length ? { fields: wireFields(fields) } : {} } };
  }
  const v = o.value;
  switch (v.kind) {
    case 'created': return { ...base, result: { id: v.memory.id, created_at: isoTimestamp(v.memory.createdAt) } };
    case 'read': return { ...base, result: memoryWire(v.memory) };
    case 'updated': return { ...base, result: { id: v.memory.id, updated_at: isoTimestamp(v.memory.updatedAt) } };
    case 'deleted': return { ...base, result: { id: v.id, deleted_at: isoTimestamp(v.deletedAt) } };
    case 'searched': {
      const results = v.hits.map((h) => ({ id: h.memory.id, content: h.memory.content, score: Math.round(h.score * 1e6) / 1e6, ...mark(h.memory) }));
      return { ...base, result: { results, total: v.total } };
    }
    case 'valid': return { ...base, result: { valid: true } };
  }
}
