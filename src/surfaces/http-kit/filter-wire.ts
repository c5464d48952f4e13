import { Type } from 'typebox';
import type { FieldProblem } from '../../core/errors.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import { checkFilter, MAX_FILTER_VALUES, parseMetadataFilter, parseTimestamp } from '../../core/search/filters.ts';

/**
 * G3's `filters` object on the wire, for the surfaces that take the same filter outside G3 (G1's forget): `type`,
 * `tags` (an array, `$in` or `$all`), `date` (`$gte` / `$lte` on the creation time) and any other key a metadata
 * filter. G3's requests read their filters with parseFilterWire too (surfaces do not import each other); the checks
 * beyond shape use the core's (core/search/filters.ts).
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
    && value.every((v) => typeof v === 'string' && v.length > 0)) {
    return value as string[];
  }
  problems.push({ field, reason: 'invalid_value', message: LIST_MESSAGE });
  return undefined;
}

function parseType(value: unknown, field: string, filter: MemoryFilter, problems: FieldProblem[]): void {
  if (typeof value === 'string' && value.length > 0) filter.types = [value];
  else if (Array.isArray(value)) filter.types = stringList(value, field, problems);
  else problems.push({ field, reason: 'invalid_value', message: `must be a non-empty string or an array of 1-${MAX_FILTER_VALUES} of them` });
}

function parseTags(value: unknown, field: string, filter: MemoryFilter, problems: FieldProblem[]): void {
  if (Array.isArray(value)) {
    filter.tagsAny = stringList(value, field, problems);
    return;
  }
  if (!isObject(value)) {
    problems.push({ field, reason: 'invalid_type', message: 'must be an array of tags, {"$in": [...]} or {"$all": [...]}' });
    return;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) problems.push({ field, reason: 'invalid_value', message: 'must have $in or $all' });
  for (const [op, list] of entries) {
    if (op === '$in') filter.tagsAny = stringList(list, `${field}.$in`, problems);
    else if (op === '$all') filter.tagsAll = stringList(list, `${field}.$all`, problems);
    else problems.push({ field: `${field}.${op}`, reason: 'not_allowed', message: 'unknown operator; tags take $in (any of) or $all (every one)' });
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/**
 * An ISO 8601 bound: a date alone is a UTC day (its start for $gte, its last millisecond for $lte, so both stay
 * inclusive); a date-time without an offset is UTC. Null when it is not ISO 8601.
 */
function parseBound(value: string, end: boolean): Date | null {
  const text = value.trim();
  const d = parseTimestamp(text);
  if (!d) return null;
  return end && DATE_ONLY.test(text) ? new Date(d.getTime() + DAY_MS - 1) : d;
}

function parseDate(value: unknown, field: string, filter: MemoryFilter, problems: FieldProblem[]): void {
  if (!isObject(value)) {
    problems.push({ field, reason: 'invalid_type', message: 'must be an object with $gte and/or $lte' });
    return;
  }
  for (const [op, bound] of Object.entries(value)) {
    const where = `${field}.${op}`;
    if (op !== '$gte' && op !== '$lte') {
      problems.push({ field: where, reason: 'not_allowed', message: 'unknown operator; date takes $gte and $lte' });
      continue;
    }
    const at = typeof bound === 'string' ? parseBound(bound, op === '$lte') : null;
    if (!at) problems.push({ field: where, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time' });
    else if (op === '$gte') filter.createdFrom = at;
    else filter.createdTo = at;
  }
  checkFilter(filter, problems, { from: `${field}.$gte`, to: `${field}.$lte` });
}

/**
 * G3 `filters` -> MemoryFilter: `type`, `tags`, `date`, and every other key a metadata filter (dotted keys for
 * nested metadata). Adds a problem per bad key, named from `field`.
 */
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
    if (key === 'type') parseType(value, where, filter, problems);
    else if (key === 'tags') parseTags(value, where, filter, problems);
    else if (key === 'date') parseDate(value, where, filter, problems);
    else if (key.startsWith('$')) problems.push({ field: where, reason: 'not_allowed', message: 'unknown operator; filters take type, tags, date and metadata keys' });
    else if (isObject(value)) {
      const operators = Object.keys(value).filter((k) => k.startsWith('$'));
      for (const op of operators) {
        problems.push({ field: `${where}.${op}`, reason: 'not_allowed', message: 'unknown operator; a metadata filter is a value or an array of values' });
      }
      if (operators.length === 0) {
        problems.push({ field: where, reason: 'invalid_type', message: 'must be a string, number or boolean, or an array of them; write nested keys with dots' });
      }
    } else metadata[key] = value;
  }
  const parsed = parseMetadataFilter(metadata, problems, field);
  if (parsed && Object.keys(parsed).length > 0) filter.metadata = parsed;
  return filter;
}

// ---------------------------------------------------------------------------------------------------------------
// namespace, embedding flag

