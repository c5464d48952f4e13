import { DomainError, type FieldProblem } from '../errors.ts';
import { isValidAt, type Memory, type MemoryFilter } from './memory.types.ts';

/**
 * Which memories a read sees (docs/memory-lifecycle.md): by default those valid now; `asOf` those valid at that moment
 * (and created by then); `includeExpired` every memory, each marked by `validityAt`.
 */
export interface ValidityOption {
  asOf?: Date | undefined;
  includeExpired?: boolean | undefined;
}

/** The moment a read's memories must be valid at (MemoryFilter.validAt), or undefined when validity does not filter. */
export function validAtFor(option: ValidityOption | undefined, now: Date): Date | undefined {
  if (option?.includeExpired) return undefined;
  return option?.asOf ?? now;
}

/**
 * `filter` with the read's validity applied (a new object; the caller's is left as it was). `as_of` is bitemporal: a
 * memory valid at that moment, and recorded by then (created_at ≤ as_of, through the filter's createdTo), so that a
 * fact written later never answers a question about the past.
 */
export function withValidity(filter: MemoryFilter, option: ValidityOption | undefined, now: Date): MemoryFilter {
  const validAt = validAtFor(option, now);
  const asOf = option?.includeExpired ? undefined : option?.asOf;
  const createdTo = asOf && (!filter.createdTo || asOf < filter.createdTo) ? asOf : filter.createdTo;
  return { ...filter, validAt, createdTo };
}

/** Why a memory does or does not hold at a moment: what a result returned with `include_expired` is marked with. */
export type ValidityState = 'valid' | 'expired' | 'superseded' | 'not_yet_valid';

/** `asOf`: judged as of a past moment, when a memory recorded after it was not yet known (`not_yet_valid`). */
export function validityAt(m: Pick<Memory, 'validFrom' | 'validUntil' | 'createdAt' | 'supersededBy'>, at: Date, asOf = false): ValidityState {
  if (asOf && m.createdAt.getTime() > at.getTime()) return 'not_yet_valid';
  if (isValidAt(m, at)) return 'valid';
  if (m.validUntil !== null && m.validUntil.getTime() <= at.getTime()) return m.supersededBy !== null ? 'superseded' : 'expired';
  return 'not_yet_valid';
}

/** Checks a pair of validity bounds: valid_until, when set, must come after valid_from. */
export function checkValidityBounds(validFrom: Date | undefined, validUntil: Date | null | undefined, problems: FieldProblem[]): void {
  if (validFrom !== undefined && Number.isNaN(validFrom.getTime())) {
    problems.push({ field: 'valid_from', reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
  }
  if (validUntil && Number.isNaN(validUntil.getTime())) {
    problems.push({ field: 'valid_until', reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
  }
  if (validFrom && validUntil && validUntil.getTime() <= validFrom.getTime()) {
    problems.push({ field: 'valid_until', reason: 'invalid_value', message: 'must be after valid_from' });
  }
}

/** An `as_of` from a request must be a time (a future one is allowed: it sees the facts scheduled to hold by then). */
export function assertAsOf(asOf: Date | undefined): void {
  if (asOf !== undefined && Number.isNaN(asOf.getTime())) {
    throw new DomainError('VALIDATION_FAILED', 'as_of must be an ISO 8601 date-time', {
      fields: [{ field: 'as_of', reason: 'invalid_format', message: 'must be an ISO 8601 date-time' }],
    });
  }
}

/**
 * How a read's results are marked: with `include_expired`, each memory's state at `as_of` (else now); otherwise not
 * at all (every result is valid). One rule for every surface.
 */
export function validityMarker(option: ValidityOption, now: Date): (m: Memory) => { validity?: ValidityState } {
  if (!option.includeExpired) return () => ({});
  const at = option.asOf ?? now;
  const asOf = option.asOf !== undefined;
  return (m) => ({ validity: validityAt(m, at, asOf) });
}
