import { Type } from 'typebox';
import type { FieldProblem } from '../../core/errors.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import { checkFilter, MAX_FILTER_VALUES, parseMetadataFilter, parseTimestamp } from '../../core/search/filters.ts';

/**
 * G3's `filters` object on the wire, for the surfaces that take the same filter outside G3 (G1's forget): `type`,
 * `tags` (an array, `$in` or `$all`), `date` (`$gte` / `$lte` on the creation time) and any other key a metadata
 * filter. The same shape and rules as G3's requests.ts (surfaces do not import each other); the checks beyond shape
 * use the core's (core/search/filters.ts).
 */
const NonEmpty = Type.String({ minLength: 1 });
const ValueList = Type.Array(NonEmpty, { minItems: 1, maxItems: MAX_FILTER_VALUES });

export const FilterWire = Type.Object({
  type: Type.Optional(Type.Union([NonEmpty, ValueList], { description: 'A memory type, or an array of types (any of them)' })),
  tags: Type.Optional(Type.Union([
    ValueList,
    Type.Object({ $in: Type.Optional(ValueList), $all: Type.Optional(ValueList) }, { additionalProperties: false, minProperties: 1 }),
  ], { description: 'An array of tags (memories having any of them), `{"$in": [...]}` (any of them) or `{"$all": [...]}` (every one of them)' })),
  date: Type.Optional(Type.Object({
    $gte: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; created at or after (inclusive)' })),
    $lte: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; created at or before (inclusive; a date alone means the whole UTC day)' })),
  }, { additionalProperties: false, description: 'Range on the creation time' })),
}, {
  additionalProperties: true,
  description: 'G3\'s filters. Every other key is a metadata filter: a string, number or boolean (equality) or an array of them (any of). '
    + 'Nested metadata by dotted keys (`"source.kind": "web"`). Unknown `$` operators are a 400.',
});

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const LIST_MESSAGE = `must be an array of 1-${MAX_FILTER_VALUES} non-empty strings`;

function stringList(value: unknown, field: string, problems: FieldProblem[]): string[] | undefined {
  if (Array.isArray(value) && value.length >= 1 && value.length <= MAX_FILTER_VALUES
    && value.every((v) => typeof v === 'string' && v.length > 0)) return value as string[];
  problems.push({ field, reason: 'invalid_value', message: LIST_MESSAGE });
  return undefined;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** A date alone is a UTC day: its start for $gte, its last millisecond for $lte (both inclusive). */
function bound(value: unknown, end: boolean): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  const d = parseTimestamp(text);
  if (!d) return null;
  return end && DATE_ONLY.test(text) ? new Date(d.getTime() + DAY_MS - 1) : d;
}

/** `filters` -> MemoryFilter, one problem per bad key (named from `field`), as G3 reads it. */
export function parseFilterWire(raw: unknown, field: string, problems: FieldProblem[]): MemoryFilter {
  const filter: MemoryFilter = {};
  if (raw === undefined) return filter;
  if (!isObject(raw)) {
    problems.push({ field, reason: 'invalid_type', message: 'must be an object' });
    return filter;
  }
  // No prototype: a `__proto__` key stays a key (and is refused by parseMetadataFilter) instead of replacing it.
  const metadata = Object.create(null) as Loose;
  for (const [key, value] of Object.entries(raw)) {
    const where = `${field}.${key}`;
    if (key === 'type') {
      if (typeof value === 'string' && value.length > 0) filter.types = [value];
      else if (Array.isArray(value)) filter.types = stringList(value, where, problems);
      else problems.push({ field: where, reason: 'invalid_value', message: `must be a non-empty string or an array of 1-${MAX_FILTER_VALUES} of them` });
    } else if (key === 'tags') {
      if (Array.isArray(value)) filter.tagsAny = stringList(value, where, problems);
      else if (!isObject(value) || Object.keys(value).length === 0) {
        problems.push({ field: where, reason: 'invalid_type', message: 'must be an array of tags, {"$in": [...]} or {"$all": [...]}' });
      } else {
        for (const [op, list] of Object.entries(value)) {
          if (op === '$in') filter.tagsAny = stringList(list, `${where}.$in`, problems);
          else if (op === '$all') filter.tagsAll = stringList(list, `${where}.$all`, problems);
          else problems.push({ field: `${where}.${op}`, reason: 'not_allowed', message: 'unknown operator; tags take $in (any of) or $all (every one)' });
        }
      }
    } else if (key === 'date') {
      if (!isObject(value)) {
        problems.push({ field: where, reason: 'invalid_type', message: 'must be an object with $gte and/or $lte' });
        continue;
      }
      for (const [op, b] of Object.entries(value)) {
        if (op !== '$gte' && op !== '$lte') {
          problems.push({ field: `${where}.${op}`, reason: 'not_allowed', message: 'unknown operator; date takes $gte and $lte' });
          continue;
        }
        const at = bound(b, op === '$lte');
        if (!at) problems.push({ field: `${where}.${op}`, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time' });
        else if (op === '$gte') filter.createdFrom = at;
        else filter.createdTo = at;
      }
      checkFilter(filter, problems, { from: `${where}.$gte`, to: `${where}.$lte` });
    } else if (key.startsWith('$')) {
      problems.push({ field: where, reason: 'not_allowed', message: 'unknown operator; filters take type, tags, date and metadata keys' });
    } else if (isObject(value)) {
      problems.push({ field: where, reason: 'invalid_type', message: 'must be a string, number or boolean, or an array of them; write nested keys with dots' });
    } else metadata[key] = value;
  }
  const parsed = parseMetadataFilter(metadata, problems, field);
  if (parsed && Object.keys(parsed).length > 0) filter.metadata = parsed;
  return filter;
}
