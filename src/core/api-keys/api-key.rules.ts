import { DomainError, type FieldProblem } from '../errors.ts';
import { ALL_PERMISSIONS, TIERS, type ApiKeyRecord, type Principal, type Permission, type Tier } from './api-key.types.ts';

/**
 * What an API key managed through G11 may look like, and what a caller may hand out. The rule against privilege
 * escalation: a key never makes (creates, or gets by rotation) a key holding more than itself — a scope it lacks, a
 * tier above its own, a life longer than its own — and it changes, revokes or rotates only keys whose scopes and tier
 * it holds itself. Otherwise a key with `apikeys:manage` and little else could mint itself an all-powerful key.
 */

export const KEY_NAME_MAX = 100;
export const KEY_NAME_RULE = `must be 1-${KEY_NAME_MAX} characters, not blank, without control characters`;
/** The name of keys made without one (the command line's default, and keys made before names existed). */
export const DEFAULT_KEY_NAME = 'API key';

/** How long a rotated key keeps working by default (24 h), and at most (30 days). 0: it stops at once. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400;
export const MAX_ROTATION_GRACE_SECONDS = 30 * 86_400;

const CONTROL = /\p{Cc}/u;

export function keyNameProblem(name: string, field = 'name'): FieldProblem | undefined {
  if (name.trim().length === 0) return { field, reason: 'empty', message: KEY_NAME_RULE };
  if (name.length > KEY_NAME_MAX) return { field, reason: 'too_long', message: KEY_NAME_RULE };
  if (CONTROL.test(name)) return { field, reason: 'invalid_format', message: KEY_NAME_RULE };
  return undefined;
}

/** Whether `s` names one of Mnemo's permissions (a key's scope, an OAuth scope). */
export const isPermission = (s: string): s is Permission => (ALL_PERMISSIONS as readonly string[]).includes(s);

export function scopesProblems(scopes: readonly string[], field = 'scopes'): FieldProblem[] {
  if (scopes.length === 0) return [{ field, reason: 'too_few', message: 'must name at least one scope' }];
  return scopes.flatMap((s, i) => (isPermission(s) ? [] : [{
    field: `${field}[${i}]`, reason: 'invalid_value' as const, message: `must be one of: ${ALL_PERMISSIONS.join(', ')}`,
  }]));
}

export function expiresAtProblem(expiresAt: Date, now: Date, field = 'expiresAt'): FieldProblem | undefined {
  if (Number.isNaN(expiresAt.getTime())) return { field, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' };
  return expiresAt.getTime() > now.getTime() ? undefined : { field, reason: 'invalid_value', message: 'must be in the future' };
}

export function gracePeriodProblem(seconds: number, field = 'gracePeriodSeconds'): FieldProblem | undefined {
  return Number.isSafeInteger(seconds) && seconds >= 0 && seconds <= MAX_ROTATION_GRACE_SECONDS ? undefined
    : { field, reason: 'out_of_range', message: `must be a whole number of seconds from 0 to ${MAX_ROTATION_GRACE_SECONDS}` };
}

const tierRank = (t: Tier): number => TIERS.indexOf(t);
const lacking = (caller: Principal, scopes: readonly Permission[]): Permission[] => scopes.filter((s) => !caller.scopes.has(s));
/** null expiry is "never": the latest of all. */
const outlives = (expiresAt: Date | null, limit: Date | null): boolean =>
  limit !== null && (expiresAt === null || expiresAt.getTime() > limit.getTime());

/** Refuses (403 PERMISSION_DENIED) a key holding more than the caller: scopes it lacks, a higher tier, a longer life. */
export function assertMayGrant(caller: Principal, grant: { scopes?: readonly Permission[]; tier?: Tier; expiresAt?: Date | null }): void {
  const missing = lacking(caller, grant.scopes ?? []);
  if (missing.length > 0) {
    throw new DomainError('PERMISSION_DENIED', `This API key cannot grant scopes it does not hold: ${missing.join(', ')}`, { field: 'scopes' });
  }
  if (grant.tier !== undefined && tierRank(grant.tier) > tierRank(caller.tier)) {
    throw new DomainError('PERMISSION_DENIED', `This API key (tier ${caller.tier}) cannot grant the higher tier ${grant.tier}`, { field: 'tier' });
  }
  if (grant.expiresAt !== undefined && outlives(grant.expiresAt, caller.expiresAt)) {
    throw new DomainError('PERMISSION_DENIED',
      `This API key expires at ${caller.expiresAt!.toISOString()}; a key it makes cannot expire later`, { field: 'expiresAt' });
  }
}

/** Refuses (403) changing, revoking or rotating a key that holds a scope the caller lacks or a tier above the caller's. */
export function assertMayManage(caller: Principal, target: ApiKeyRecord): void {
  const missing = lacking(caller, target.scopes);
  if (missing.length > 0) {
    throw new DomainError('PERMISSION_DENIED', `This API key cannot manage ${target.id}, which holds scopes this key lacks: ${missing.join(', ')}`);
  }
  if (tierRank(target.tier) > tierRank(caller.tier)) {
    throw new DomainError('PERMISSION_DENIED', `This API key (tier ${caller.tier}) cannot manage ${target.id} of the higher tier ${target.tier}`);
  }
}
