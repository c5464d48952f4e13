import type { Permission, Principal } from '../api-keys/api-key.types.ts';
import { DomainError } from '../errors.ts';
import type { SecurityEventType } from '../events/event.types.ts';

/**
 * What a subscriber must also be allowed to read to receive each secrets-component event, checked when a webhook
 * subscribes to it (create, update): an event tells what the permission would show. Without it a key holding only
 * `secrets:write` could learn of API-key rotations it may not list.
 */
export const SECURITY_EVENT_PERMISSIONS = {
  'secret.created': 'secrets:read',
  'secret.accessed': 'secrets:read',
  'apikey.rotated': 'apikeys:manage',
} as const satisfies Record<SecurityEventType, Permission>;

/** Throws PERMISSION_DENIED (field `events`) for the first event `principal` may not receive. */
export function authorizeSecurityEvents(principal: Pick<Principal, 'scopes'>, events: readonly string[]): void {
  for (const type of new Set(events)) {
    const needed = Object.hasOwn(SECURITY_EVENT_PERMISSIONS, type) ? SECURITY_EVENT_PERMISSIONS[type as SecurityEventType] : undefined;
    if (needed !== undefined && !principal.scopes.has(needed)) {
      throw new DomainError('PERMISSION_DENIED', `Receiving ${type} needs the ${needed} scope`, { requiredScope: needed, field: 'events' });
    }
  }
}
