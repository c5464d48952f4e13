import type { IssuedKey } from '../../core/api-keys/api-key-management.service.ts';
import type { ApiKeyRecord } from '../../core/api-keys/api-key.types.ts';
import { isoTimestamp } from '../../core/clock.ts';
import type { SecretSummary, SecretView } from '../../core/secrets/secret.service.ts';

export const toSecretSummaryWire = (s: SecretSummary) => ({
  id: s.id, name: s.name, version: s.version, tags: s.tags,
  createdAt: isoTimestamp(s.createdAt), updatedAt: isoTimestamp(s.updatedAt), expiresAt: s.expiresAt ? isoTimestamp(s.expiresAt) : null,
});

export const toSecretWire = (s: SecretView) => ({ ...toSecretSummaryWire(s), value: s.value });

/** An API key as G11 shows it: never its digest; its text only where it is made (`toIssuedApiKeyWire`). */
export const toApiKeyWire = (k: ApiKeyRecord) => ({
  id: k.id, name: k.name, prefix: k.displayPrefix, scopes: k.scopes, tier: k.tier, mode: k.mode,
  createdAt: isoTimestamp(k.createdAt), expiresAt: k.expiresAt ? isoTimestamp(k.expiresAt) : null,
  revokedAt: k.revokedAt ? isoTimestamp(k.revokedAt) : null, replacedBy: k.replacedBy,
});

export const toIssuedApiKeyWire = (issued: IssuedKey) => ({ ...toApiKeyWire(issued.record), key: issued.key });
