import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { apiKeyRotated } from './api-key-events.ts';
import type { ApiKeyRepository } from './api-key.repository.ts';
import {
  assertMayGrant, assertMayManage, DEFAULT_ROTATION_GRACE_SECONDS, expiresAtProblem, gracePeriodProblem, keyNameProblem, scopesProblems,
} from './api-key.rules.ts';
import { newKeyRecord } from './api-key.service.ts';
import type { ApiKeyOwner, ApiKeyRecord, Principal, Permission, Tier } from './api-key.types.ts';

export interface ManagedKeyInput {
  name: string;
  /** Absent: the caller's own scopes. */
  scopes?: readonly Permission[] | undefined;
  /** Absent: the caller's own tier. */
  tier?: Tier | undefined;
  /** Absent: the caller's own expiry (never, when the caller never expires); null: never (if the caller never does). */
  expiresAt?: Date | null | undefined;
}

export interface ManagedKeyChanges {
  name?: string | undefined;
  scopes?: readonly Permission[] | undefined;
}

/** A key as made: its record, and its text, which is shown this once and never stored. */
export interface IssuedKey {
  record: ApiKeyRecord;
  key: string;
}

export type ApiKeyManagement = ReturnType<typeof createApiKeyManagement>;

/** Cursors are opaque to clients: the last key of a page (creation time and id), in base64url. */
const encodeCursor = (k: ApiKeyRecord): string => Buffer.from(`k:${k.createdAt.getTime()}:${k.id}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const m = /^k:(\d{1,15}):([A-Za-z0-9_]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  return { createdAt: new Date(Number(m[1])), id: m[2]! };
}

const ownerOf = (caller: Principal): ApiKeyOwner => ({ tenantId: caller.tenantId, mode: caller.mode });
const notFound = (id: string) => new DomainError('NOT_FOUND', `API key ${JSON.stringify(id)} not found`);
const revoked = (k: ApiKeyRecord) => new DomainError('CONFLICT', `API key ${k.id} is revoked`);

function check(problems: (FieldProblem | undefined)[]): void {
  const found = problems.filter((p): p is FieldProblem => p !== undefined);
  if (found.length > 0) throw validationError(found);
}

/**
 * API keys managed by a key (G11 `/v1/security/api-keys`). A caller sees and manages the keys of its own tenant and
 * mode only (another's key answers exactly like a missing one), and never makes a key holding more than itself
 * (api-key.rules.ts). Keys it creates belong to its tenant, mode and user.
 */
export function createApiKeyManagement(deps: { keys: ApiKeyRepository; clock: Clock }) {
  const { keys, clock } = deps;

  async function owned(caller: Principal, id: string): Promise<ApiKeyRecord> {
    const found = await keys.find(ownerOf(caller), id);
    if (!found) throw notFound(id);
    return found;
  }

  async function create(caller: Principal, input: ManagedKeyInput): Promise<IssuedKey> {
    const now = clock.now();
    check([
      keyNameProblem(input.name),
      ...(input.scopes === undefined ? [] : scopesProblems(input.scopes)),
      input.expiresAt ? expiresAtProblem(input.expiresAt, now) : undefined,
    ]);
    const grant = {
      scopes: input.scopes === undefined ? [...caller.scopes] : [...new Set(input.scopes)],
      tier: input.tier ?? caller.tier,
      expiresAt: input.expiresAt === undefined ? caller.expiresAt : input.expiresAt,
    };
    assertMayGrant(caller, grant);
    const made = newKeyRecord({ tenantId: caller.tenantId, mode: caller.mode, userId: caller.userId, name: input.name.trim(), ...grant }, now);
    await keys.insert(made.record);
    return made;
  }

  async function get(caller: Principal, id: string): Promise<ApiKeyRecord> {
    return owned(caller, id);
  }

  /** Oldest first; `cursor` continues after the previous page (null: from the first). */
  async function list(caller: Principal, q: { limit: number; cursor: string | null }):
    Promise<{ items: ApiKeyRecord[]; total: number; nextCursor: string | null }> {
    const after = q.cursor === null ? null : decodeCursor(q.cursor);
    // One more than asked tells whether another page follows.
    const { items, total } = await keys.listPage(ownerOf(caller), { limit: q.limit + 1, after });
    const page = items.slice(0, q.limit);
    return { items: page, total, nextCursor: items.length > q.limit ? encodeCursor(page.at(-1)!) : null };
  }

  /** Renames a key or replaces its scopes; the new scopes apply from the key's very next request. */
  async function update(caller: Principal, id: string, changes: ManagedKeyChanges): Promise<ApiKeyRecord> {
    if (changes.name === undefined && changes.scopes === undefined) {
      throw validationError([{ field: 'body', reason: 'too_few', message: 'name or scopes is required' }]);
    }
    check([
      changes.name === undefined ? undefined : keyNameProblem(changes.name),
      ...(changes.scopes === undefined ? [] : scopesProblems(changes.scopes)),
    ]);
    const target = await owned(caller, id);
    if (target.revokedAt) throw revoked(target);
    assertMayManage(caller, target);
    if (changes.scopes !== undefined) assertMayGrant(caller, { scopes: changes.scopes });
    const stored = await keys.update(ownerOf(caller), id, {
      ...(changes.name === undefined ? {} : { name: changes.name.trim() }),
      ...(changes.scopes === undefined ? {} : { scopes: [...new Set(changes.scopes)] }),
    });
    if (!stored) throw notFound(id);
    return stored;
  }

  /** Revokes a key at once (the caller's own included: its next request is refused). */
  async function revoke(caller: Principal, id: string): Promise<void> {
    const target = await owned(caller, id);
    if (target.revokedAt) throw revoked(target);
    assertMayManage(caller, target);
    await keys.revoke(id, clock.now());
  }

  /**
   * A new key with the same name, scopes, tier, user and expiry; the old one keeps working for the grace period
   * (default 24 h; 0: it stops at once), never past its own expiry. A key is rotated once: its replacement is the
   * one to rotate next. Emits `apikey.rotated`, written with the rotation (api-key-events.ts).
   */
  async function rotate(caller: Principal, id: string, options: { gracePeriodSeconds?: number | undefined } = {}): Promise<IssuedKey> {
    const grace = options.gracePeriodSeconds ?? DEFAULT_ROTATION_GRACE_SECONDS;
    check([gracePeriodProblem(grace)]);
    const target = await owned(caller, id);
    const now = clock.now();
    const refuse = (why: string) => new DomainError('CONFLICT', `API key ${target.id} ${why}: only a live key can be rotated`);
    if (target.revokedAt) throw refuse('is revoked');
    if (target.replacedBy) throw refuse(`was already rotated into ${target.replacedBy}`);
    if (target.expiresAt && target.expiresAt.getTime() <= now.getTime()) throw refuse('has expired');
    assertMayManage(caller, target);
    // The new key carries the old one's expiry: it may not outlive the caller either.
    assertMayGrant(caller, { expiresAt: target.expiresAt });
    const made = newKeyRecord({
      tenantId: target.tenantId, mode: target.mode, userId: target.userId, name: target.name, tier: target.tier,
      scopes: target.scopes, expiresAt: target.expiresAt,
    }, now);
    const graceEnd = now.getTime() + grace * 1000;
    const oldExpiresAt = new Date(target.expiresAt === null ? graceEnd : Math.min(target.expiresAt.getTime(), graceEnd));
    const events = [apiKeyRotated(target, made.record, oldExpiresAt, caller.userId, now)];
    if (!(await keys.rotate(ownerOf(caller), id, made.record, oldExpiresAt, now, events))) {
      // Another request revoked or rotated it since it was read.
      throw refuse('changed while it was being rotated');
    }
    return made;
  }

  return { create, get, list, update, revoke, rotate };
}
