import type { FieldProblem } from '../errors.ts';
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenKeySegment } from '../json-limits.ts';
import { METADATA_KEY_PATTERN, type MemoryFilter, type MetadataFilterValue } from '../memories/memory.types.ts';

export const MAX_FILTER_VALUES = 100;
export const MAX_METADATA_FILTER_KEYS = 20;

/**
 * Checks a metadata filter from a request (any JSON) and returns it typed, adding a problem per bad key.
 * Values: a string, number or boolean (equality), or an array of them (any of). Keys naming `__proto__` are refused.
 */
export function parseMetadataFilter(raw: unknown, problems: FieldProblem[], field: string): Record<string, MetadataFilterValue> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ field, reason: 'invalid_type', message: 'must be an object of key: value or key: [values]' });
    return undefined;
  }
  // No prototype: every key is a plain property (in `{}`, assigning `__proto__` would replace the prototype).
  const out = Object.create(null) as Record<string, MetadataFilterValue>;
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_METADATA_FILTER_KEYS) problems.push({ field, reason: 'too_many', message: `at most ${MAX_METADATA_FILTER_KEYS} keys` });
  for (const [key, value] of entries) {
    const where = `${field}.${key}`;
    if (!METADATA_KEY_PATTERN.test(key)) {
      problems.push({ field: where, reason: 'invalid_format', message: 'keys are letters, digits, _ and -, with dots for nested keys' });
      continue;
    }
    if (hasForbiddenKeySegment(key)) {
      problems.push({ field: where, reason: 'not_allowed', message: FORBIDDEN_KEY_MESSAGE });
      continue;
    }
    const scalar = (v: unknown): v is string | number | boolean =>
      typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
    if (scalar(value)) out[key] = value;
    else if (Array.isArray(value) && value.every(scalar) && value.length <= MAX_FILTER_VALUES) out[key] = value;
    else problems.push({ field: where, reason: 'invalid_type', message: `must be a string, number or boolean, or an array of at most ${MAX_FILTER_VALUES} of them` });
  }
  return out;
}

/** Cross-field rules of a filter. */
export function checkFilter(filter: MemoryFilter, problems: FieldProblem[], fields: { from: string; to: string }): void {
  if (filter.createdFrom && Number.isNaN(filter.createdFrom.getTime())) problems.push({ field: fields.from, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
  if (filter.createdTo && Number.isNaN(filter.createdTo.getTime())) problems.push({ field: fields.to, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
  if (filter.createdFrom && filter.createdTo && filter.createdFrom > filter.createdTo) {
    problems.push({ field: fields.from, reason: 'invalid_value', message: `must not be after ${fields.to}` });
  }
}

/** A date-time without a zone (`2026-03-01T12:00`): read as UTC, never in the server's own time zone. */
const TIME_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;

/** Parses an ISO 8601 date or date-time (UTC when it names no zone); null when it is not one. */
export function parseTimestamp(value: string): Date | null {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return null;
  const d = new Date(TIME_WITHOUT_ZONE.test(text) ? `${text.replace(' ', 'T')}Z` : text);
  return Number.isNaN(d.getTime()) ? null : d;
}
