import { Type } from 'typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { FieldProblem } from '../../core/errors.ts';
import type { Memory } from '../../core/memories/memory.types.ts';
import { validityMarker, type ValidityOption, type ValidityState } from '../../core/memories/validity.ts';
import { parseTimestamp } from '../../core/search/filters.ts';

/**
 * "Memory that stays true" on the REST surfaces (docs/memory-lifecycle.md): what every surface reads and writes the
 * same way — `valid_from` / `valid_until` on writes, `as_of` / `include_expired` on reads, the `validity` marker of
 * results read with include_expired, and the four fields a memory shows (valid_from, valid_until, superseded_by,
 * version). Each surface names the fields in its own style and reports problems in its own envelope.
 */

const TIME_MESSAGE = 'must be an ISO 8601 date or date-time, e.g. 2026-01-31T12:00:00Z';

/** An ISO 8601 time from a request (a date alone is its UTC midnight; no zone is UTC); a problem on `field` otherwise. */
export function timeParam(value: unknown, field: string, problems: FieldProblem[]): Date | undefined {
  if (value === undefined) return undefined;
  const d = typeof value === 'string' ? parseTimestamp(value) : null;
  if (d === null) problems.push({ field, reason: typeof value === 'string' ? 'invalid_format' : 'invalid_type', message: TIME_MESSAGE });
  return d ?? undefined;
}

/** A write's validity bounds as the core takes them: absent fields stay absent; `valid_until: null` is kept (reopens). */
export interface WriteValidity { validFrom?: Date; validUntil?: Date | null }

/** `valid_from` / `valid_until` of a create or update (field names as sent, under `prefix`, e.g. `data.`). */
export function writeValidity(raw: { valid_from?: unknown; valid_until?: unknown }, problems: FieldProblem[], prefix = ''): WriteValidity {
  const validFrom = raw.valid_from === null
    ? (problems.push({ field: `${prefix}valid_from`, reason: 'invalid_type', message: TIME_MESSAGE }), undefined)
    : timeParam(raw.valid_from, `${prefix}valid_from`, problems);
  const validUntil = raw.valid_until === null ? null : timeParam(raw.valid_until, `${prefix}valid_until`, problems);
  return { ...(validFrom === undefined ? {} : { validFrom }), ...(validUntil === undefined ? {} : { validUntil }) };
}

/** A read's validity (which memories it sees) and how it marks them. */
export interface ReadValidity {
  option: ValidityOption;
  /** With include_expired: `{validity}` at as_of, else now; otherwise nothing (every result holds then). */
  mark: (m: Memory) => { validity?: ValidityState };
}

/**
 * `as_of` / `include_expired` of a list or search. include_expired must be a boolean (a query string's
 * `true` / `false` arrive as booleans once the route schema coerced them).
 */
export function readValidity(raw: { as_of?: unknown; include_expired?: unknown }, clock: Pick<Clock, 'now'>, problems: FieldProblem[],
  fields = { asOf: 'as_of', includeExpired: 'include_expired' }): ReadValidity {
  const asOf = timeParam(raw.as_of, fields.asOf, problems);
  const inc = raw.include_expired;
  if (inc !== undefined && typeof inc !== 'boolean') {
    problems.push({ field: fields.includeExpired, reason: 'invalid_type', message: 'must be a boolean' });
  }
  const includeExpired = inc === true;
  const option: ValidityOption = { ...(asOf ? { asOf } : {}), ...(includeExpired ? { includeExpired: true } : {}) };
  return { option, mark: validityMarker(option, clock.now()) };
}

/** The four lifecycle fields every memory shows (snake_case, G1 to G10 style). */
export const validityWire = (m: Pick<Memory, 'validFrom' | 'validUntil' | 'supersededBy' | 'version'>) => ({
  valid_from: isoTimestamp(m.validFrom),
  valid_until: m.validUntil ? isoTimestamp(m.validUntil) : null,
  superseded_by: m.supersededBy,
  version: m.version,
});

// ---------------------------------------------------------------------------------------------------------------
// schemas (module constants: the apps of a process share what is compiled from them)

export const ValidFromField = Type.String({
  description: 'Mnemo extension: ISO 8601 date or date-time from which the fact holds (default on create: now). A past time '
    + 'records a fact that already held; a future one schedules it (docs/memory-lifecycle.md)',
});
export const ValidUntilField = Type.Union([Type.String(), Type.Null()], {
  description: 'Mnemo extension: ISO 8601 date or date-time until which the fact holds (exclusive; after valid_from). '
    + 'Default: open-ended; on update null reopens it. Past it, lists and searches leave the memory out',
});
export const AsOfField = Type.String({
  description: 'Mnemo extension: ISO 8601 date or date-time: answer as the workspace stood then — only memories valid at that '
    + 'moment and created by then (docs/memory-lifecycle.md). Default: now',
});
export const IncludeExpiredField = Type.Boolean({
  description: 'Mnemo extension: true also returns memories that do not hold (superseded, past valid_until, not yet valid), '
    + 'each marked with `validity`. Default false',
});

export const ValidityMarker = Type.Enum(['valid', 'expired', 'superseded', 'not_yet_valid'], {
  description: 'Only with include_expired: whether the memory holds at as_of (else now): valid, expired (past valid_until), '
    + 'superseded (replaced by superseded_by), not_yet_valid (valid_from, or its creation, is later)',
});

/** The lifecycle fields as response properties. */
export const ValidityWireFields = {
  valid_from: Type.String({ description: 'From when the memory holds (its creation time unless the writer set it)' }),
  valid_until: Type.Union([Type.String(), Type.Null()], { description: 'Until when it holds (exclusive); null: open-ended' }),
  superseded_by: Type.Union([Type.String(), Type.Null()], { description: 'The memory that replaced this one, or null' }),
  version: Type.Integer({ description: '1 as created, one more per update (earlier versions: GET /api/v1/memories/{id}/history)' }),
};
