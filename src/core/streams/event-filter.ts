import type { StoredEvent } from '../events/event.types.ts';
import type { FieldProblem } from '../errors.ts';
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenKeySegment } from '../json-limits.ts';
import { METADATA_KEY_PATTERN } from '../memories/memory.types.ts';

/**
 * The G8 `filters[<key>]=<value>` parameter, parsed. Filters apply to memory events (`memory.*`) only; every other
 * event passes. A memory event passes when every key holds:
 * - `tags`: the event's `data.tags` contains one of the comma-separated values;
 * - `memory_type` (alias `type`): `data.memory_type` equals one of the comma-separated values;
 * - any other key: `data.metadata[key]` (dotted keys reach into nested objects) equals the value, compared as text
 *   (a stored array matches when one of its elements does; commas are part of the value here).
 * An event whose data lacks the field does not pass. A key naming `__proto__` is refused.
 */
export interface StreamFilter {
  tags?: string[] | undefined;
  memoryTypes?: string[] | undefined;
  /** Per metadata key, the values of which one must match. */
  metadata: [key: string, values: string[]][];
}

export const MAX_FILTER_KEYS = 20;

const list = (value: string): string[] => value.split(',').map((s) => s.trim()).filter(Boolean);
const union = (a: string[] | undefined, b: string[]): string[] => [...new Set([...(a ?? []), ...b])];

/**
 * Parses `[key, value]` pairs (from `filters[key]=value`; `filters[key][]=value` and repeated keys add more values
 * of which any may match). Problems are reported, not thrown.
 */
export function parseStreamFilter(pairs: readonly [string, string][], problems: FieldProblem[]): StreamFilter {
  const filter: StreamFilter = { metadata: [] };
  const metadata = new Map<string, string[]>();
  const keys = new Set<string>();
  for (const [rawKey, value] of pairs) {
    const key = rawKey.endsWith('[]') ? rawKey.slice(0, -2) : rawKey;
    const field = `filters[${key}]`;
    keys.add(key);
    if (value.trim() === '') {
      problems.push({ field, reason: 'empty', message: 'must not be empty' });
      continue;
    }
    if (key === 'tags') filter.tags = union(filter.tags, list(value));
    else if (key === 'memory_type' || key === 'type') filter.memoryTypes = union(filter.memoryTypes, list(value));
    else if (hasForbiddenKeySegment(key)) problems.push({ field, reason: 'not_allowed', message: FORBIDDEN_KEY_MESSAGE });
    else if (METADATA_KEY_PATTERN.test(key)) metadata.set(key, union(metadata.get(key), [value]));
    else problems.push({ field, reason: 'invalid_format', message: 'is not a valid filter key: letters, digits, _ and -, dotted for nested metadata keys' });
  }
  if (keys.size > MAX_FILTER_KEYS) problems.push({ field: 'filters', reason: 'too_many', message: `at most ${MAX_FILTER_KEYS} keys` });
  filter.metadata = [...metadata];
  return filter;
}

export const isEmptyFilter = (f: StreamFilter): boolean => !f.tags && !f.memoryTypes && f.metadata.length === 0;

function at(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

const asText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;

export function eventPasses(filter: StreamFilter, event: Pick<StoredEvent, 'type' | 'data'>): boolean {
  if (!event.type.startsWith('memory.')) return true;
  const data = event.data;
  if (filter.tags) {
    const tags = Array.isArray(data.tags) ? data.tags : undefined;
    if (!tags || !filter.tags.some((t) => tags.includes(t))) return false;
  }
  if (filter.memoryTypes) {
    if (typeof data.memory_type !== 'string' || !filter.memoryTypes.includes(data.memory_type)) return false;
  }
  for (const [key, wanted] of filter.metadata) {
    const have = at(data.metadata, key);
    const values = Array.isArray(have) ? have : [have];
    if (!values.some((v) => { const t = asText(v); return t !== undefined && wanted.includes(t); })) return false;
  }
  return true;
}
