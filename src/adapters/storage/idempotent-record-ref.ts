import type { IdempotentRequestRef } from '../../core/idempotency/idempotent-request.repository.ts';
import type { KeyMode } from '../../core/scope.ts';

/**
 * The `sealedValues` refs of idempotent requests, the same in both adapters: the row's key and its reservation as a
 * JSON array (any text can be in a key, so no separator would do). The reservation makes `rewrap` touch only the
 * record that was read, not a later answer of the same key.
 */
export interface IdempotentRecordKey extends IdempotentRequestRef {
  reservation: string;
}

export const idempotentRecordRef = (r: IdempotentRecordKey): string =>
  JSON.stringify([r.tenantId, r.mode, r.apiKeyId, r.key, r.reservation]);

export function parseIdempotentRecordRef(ref: string): IdempotentRecordKey {
  let parts: unknown;
  try {
    parts = JSON.parse(ref);
  } catch {
    parts = null;
  }
  if (!Array.isArray(parts) || parts.length !== 5 || !parts.every((p) => typeof p === 'string')) {
    throw new Error(`not a sealed value ref of an idempotent request: ${ref}`);
  }
  const [tenantId, mode, apiKeyId, key, reservation] = parts as string[];
  return { tenantId: tenantId!, mode: mode as KeyMode, apiKeyId: apiKeyId!, key: key!, reservation: reservation! };
}
