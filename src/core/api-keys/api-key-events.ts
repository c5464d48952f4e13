import { isoTimestamp } from '../clock.ts';
import type { NewEvent } from '../events/event.types.ts';
import { newEventId } from '../events/memory-events.ts';
import type { ApiKeyRecord } from './api-key.types.ts';

/**
 * `apikey.rotated` (G11 webhooks; docs/events.md): key `old` was replaced by `replacement` at `at`, by `rotatedBy`
 * (the calling key's user), and keeps working until `graceEndsAt`. It names the keys by their record ids only: never
 * a key, its digest or its prefix. It belongs to the keys' tenant and mode, without a workspace.
 */
export function apiKeyRotated(old: ApiKeyRecord, replacement: ApiKeyRecord, graceEndsAt: Date, rotatedBy: string, at: Date): NewEvent {
  return {
    id: newEventId(), type: 'apikey.rotated', scope: { tenantId: old.tenantId, mode: old.mode, workspace: null }, createdAt: at,
    data: {
      id: old.id, replacedBy: replacement.id, name: old.name, userId: old.userId, graceEndsAt: isoTimestamp(graceEndsAt),
      rotatedBy, rotatedAt: isoTimestamp(at),
    },
  };
}
