import { isoTimestamp, type Clock } from '../clock.ts';
import type { Claims } from '../coordination/claims.port.ts';
import type { Scope } from '../scope.ts';
import type { EventRepository } from './event.repository.ts';
import type { NewEvent } from './event.types.ts';
import { newEventId } from './memory-events.ts';

export interface ActivityInput {
  scope: Scope;
  userId: string;
  keyId: string;
  /** The API generation the request went to (`g1` … `g11`), when known. */
  surface?: string | undefined;
}

export function userActivity(a: ActivityInput, at: Date): NewEvent {
  return {
    id: newEventId(), type: 'user.activity', scope: { ...a.scope }, createdAt: at,
    data: {
      object: 'user_activity', user_id: a.userId, key_id: a.keyId, surface: a.surface ?? null, workspace: a.scope.workspace,
      first_request_at: isoTimestamp(at), timestamp: isoTimestamp(at),
    },
  };
}

export type ActivityTracker = ReturnType<typeof createActivityTracker>;

/**
 * `user.activity`: emitted for a user's first authenticated request, then at most once per `windowMs` per user
 * and tenant + mode + workspace. The window is a claim (`claims`): in this process's memory on one node, in Redis
 * when nodes share it. `first_request_at` is the time of the request that opened the window.
 */
export function createActivityTracker(deps: {
  events: Pick<EventRepository, 'append'>;
  claims: Claims;
  clock: Clock;
  windowMs: number;
}) {
  return {
    /** Records a request; resolves to the emitted event, or null when the user was seen within the window. */
    async touch(a: ActivityInput): Promise<NewEvent | null> {
      const at = deps.clock.now();
      const name = `activity:${JSON.stringify([a.scope.tenantId, a.scope.mode, a.scope.workspace, a.userId])}`;
      const token = await deps.claims.claim(name, deps.windowMs);
      if (token === null) return null;
      const event = userActivity(a, at);
      try {
        await deps.events.append([event]);
      } catch (err) {
        // Not announced: the next request may try again.
        await deps.claims.release(name, token).catch(() => undefined);
        throw err;
      }
      return event;
    },
  };
}
