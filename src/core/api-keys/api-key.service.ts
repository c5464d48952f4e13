import type { Clock } from '../clock.ts';
import { DomainError } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import type { KeyMode } from '../scope.ts';
import { DISPLAY_PREFIX_LENGTH, digestKey, digestsEqual, generateKeyText, parseKeyText } from './api-key.format.ts';
import type { ApiKeyRepository } from './api-key.repository.ts';
import { DEFAULT_KEY_NAME } from './api-key.rules.ts';
import { DEFAULT_PERMISSIONS, type ApiKeyRecord, type Principal, type Permission, type Tier } from './api-key.types.ts';

export interface CreateKeyInput {
  tenantId: string;
  userId: string;
  /** Absent: "API key". */
  name?: string | undefined;
  tier: Tier;
  mode: KeyMode;
  /** Empty or absent: DEFAULT_PERMISSIONS (every scope but the opt-in `memories:forget` and `memories:auto_ingest`). */
  scopes?: readonly Permission[] | undefined;
  expiresAt?: Date | null | undefined;
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;

/** A new key's text and the record stored for it (its digest and display prefix, never the text). */
export function newKeyRecord(input: CreateKeyInput, now: Date): { record: ApiKeyRecord; key: string } {
  const key = generateKeyText(input.mode);
  const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : [...DEFAULT_PERMISSIONS];
  const record: ApiKeyRecord = {
    id: prefixedId('key'),
    tenantId: input.tenantId,
    userId: input.userId,
    name: input.name ?? DEFAULT_KEY_NAME,
    tier: input.tier,
    mode: input.mode,
    scopes,
    displayPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
    digest: digestKey(key),
    createdAt: now,
    expiresAt: input.expiresAt ?? null,
    revokedAt: null,
    replacedBy: null,
  };
  return { record, key };
}

export function createApiKeyService(deps: { keys: ApiKeyRepository; clock: Clock }) {
  const { keys, clock } = deps;
  const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

  return {
    async create(input: CreateKeyInput): Promise<{ record: ApiKeyRecord; key: string }> {
      const made = newKeyRecord(input, clock.now());
      await keys.insert(made.record);
      return made;
    },

    /** Resolves a presented key to its principal; any failure is the same UNAUTHENTICATED. */
    async authenticate(presented: string | undefined): Promise<Principal> {
      if (!presented) throw unauthenticated('API key is missing');
      // Checksum first: malformed or mistyped keys never reach storage.
      if (!parseKeyText(presented)) throw unauthenticated('API key is invalid');
      const digest = digestKey(presented);
      const record = await keys.findByDigest(digest);
      if (!record || !digestsEqual(record.digest, digest)) throw unauthenticated('API key is invalid');
      const now = clock.now();
      if (record.revokedAt && record.revokedAt <= now) throw unauthenticated('API key has been revoked');
      if (record.expiresAt && record.expiresAt <= now) throw unauthenticated('API key has expired');
      return {
        keyId: record.id,
        tenantId: record.tenantId,
        userId: record.userId,
        tier: record.tier,
        mode: record.mode,
        scopes: new Set(record.scopes),
        expiresAt: record.expiresAt,
      };
    },

    list: (tenantId?: string) => keys.list(tenantId),

    async revoke(id: string): Promise<boolean> {
      return keys.revoke(id, clock.now());
    },
  };
}

/** Throws PERMISSION_DENIED when the key lacks `permission` (operations check theirs through core/operations). */
export function requirePermission(principal: Pick<Principal, 'scopes'>, permission: Permission): void {
  if (!principal.scopes.has(permission)) {
    throw new DomainError('PERMISSION_DENIED', `This API key lacks the ${permission} scope`, { requiredScope: permission });
  }
}
