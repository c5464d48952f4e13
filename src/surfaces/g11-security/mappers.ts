import { isoTimestamp } from '../../core/clock.ts';
import type { SecretSummary, SecretView } from '../../core/secrets/secret.service.ts';

export const toSecretSummaryWire = (s: SecretSummary) => ({
  id: s.id, name: s.name, version: s.version, tags: s.tags,
  createdAt: isoTimestamp(s.createdAt), updatedAt: isoTimestamp(s.updatedAt), expiresAt: s.expiresAt ? isoTimestamp(s.expiresAt) : null,
});

export const toSecretWire = (s: SecretView) => ({ ...toSecretSummaryWire(s), value: s.value });
