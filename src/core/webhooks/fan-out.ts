import type { NewEvent, StoredEvent } from '../events/event.types.ts';
import { prefixedId } from '../ids.ts';
import type { KeyMode } from '../scope.ts';
import { webhookWants } from './webhook-filters.ts';
import type { Webhook } from './webhook.types.ts';

/** A pending delivery the outbox stores with its event, in the event's transaction. */
export interface NewDelivery {
  id: string;
  webhookId: string;
  eventSeq: number;
  /** When it is first due: the event's time. */
  dueAt: Date;
  createdAt: Date;
}

/**
 * The webhooks an adapter must read (active ones, in the event's transaction) and hand to `fanOut`: those of the
 * event's tenant and mode, or every active webhook for a system-wide event. Reading more is harmless (`fanOut`
 * decides), reading fewer loses deliveries.
 */
export type FanOutCandidates = { kind: 'scope'; tenantId: string; mode: KeyMode } | { kind: 'all' };

export function fanOutCandidates(event: NewEvent): FanOutCandidates {
  const { tenantId, mode } = event.scope;
  return tenantId === null || mode === null ? { kind: 'all' } : { kind: 'scope', tenantId, mode };
}

/**
 * The deliveries to store with a just-appended event: one per candidate webhook that wants it (`webhookWants`:
 * active, subscribed to the type, same scope, filters hold). The decision lives here so every adapter fans out alike
 * and stores only rows.
 */
export function fanOut(event: StoredEvent, candidates: readonly Webhook[]): NewDelivery[] {
  return candidates.filter((w) => webhookWants(w, event)).map((w) => ({
    id: prefixedId('dlv', 24), webhookId: w.id, eventSeq: event.seq, dueAt: event.createdAt, createdAt: event.createdAt,
  }));
}
