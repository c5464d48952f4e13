import type { EventScope } from '../events/event.types.ts';
import type { SealedRef, SealedValue } from '../secrets/secret.types.ts';
import type {
  ClaimedDelivery, DeliveryRecord, DeliveryResult, RedeliveryOutcome, Webhook, WebhookKind, WebhookPatch,
} from './webhook.types.ts';

/** A webhook whose row still holds its signing secret in plaintext (written before secrets were sealed). */
export interface PlaintextWebhookSecret extends Pick<Webhook, 'id' | 'kind' | 'scope'> {
  plaintext: string;
}

export interface WebhookListQuery {
  active?: boolean | undefined;
  event?: string | undefined;
  limit: number;
  offset: number;
}

/**
 * Storage port for webhooks and their deliveries. Scope and kind always both match, or it is not found. Signing
 * secrets are stored sealed (core/webhooks/webhook-secret.ts) and come back only with a claimed delivery.
 */
export interface WebhookRepository {
  insert(webhook: Webhook, secret: SealedValue): Promise<void>;
  findById(scope: EventScope, kind: WebhookKind, id: string): Promise<Webhook | null>;
  list(scope: EventScope, kind: WebhookKind, query: WebhookListQuery): Promise<{ items: Webhook[]; total: number }>;
  /** Webhooks created in the scope within the window, for the creation limit. */
  countCreatedSince(scope: EventScope, kind: WebhookKind, since: Date): Promise<number>;
  update(scope: EventScope, kind: WebhookKind, id: string, patch: WebhookPatch, at: Date): Promise<Webhook | null>;
  /** Deletes the webhook and its pending deliveries. */
  delete(scope: EventScope, kind: WebhookKind, id: string): Promise<boolean>;

  /**
   * Leases up to `limit` deliveries due at `now` of active webhooks, at most `perWebhook` in flight per webhook
   * (counting ones already leased), oldest event first. A lease that expires (a crashed worker) makes the delivery
   * due again: at-least-once.
   */
  claimDue(now: Date, limit: number, perWebhook: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt's outcome: done, scheduled again, or given up (and maybe the webhook failed). */
  complete(deliveryId: string, result: DeliveryResult): Promise<void>;
  /** Puts a leased delivery back without counting an attempt (e.g. the webhook's event rate was exceeded). */
  release(deliveryId: string, retryAt: Date): Promise<void>;
  /**
   * The deliveries of one webhook (found in `scope` and `kind`, else an empty page), newest first, with the event's
   * id and type.
   */
  listDeliveries(scope: EventScope, kind: WebhookKind, webhookId: string, page: { limit: number; offset: number }):
    Promise<{ items: DeliveryRecord[]; total: number }>;
  /**
   * Makes a finished delivery (succeeded or failed) of the webhook due again at `now`: state pending, no lease, the
   * attempts so far kept (the schedule continues from them). One conditional write, so two requests requeue it once.
   */
  redeliver(scope: EventScope, kind: WebhookKind, webhookId: string, deliveryId: string, now: Date): Promise<RedeliveryOutcome>;
  /** Deliveries not yet finished, for tests and the health of the queue. */
  pendingCount(): Promise<number>;

  /** Up to `limit` webhooks whose secret is still plaintext, oldest first (the start-up sealing migration). */
  plaintextSecrets(limit: number): Promise<PlaintextWebhookSecret[]>;
  /**
   * Replaces each webhook's plaintext secret with its sealed value, in one transaction, where the row still holds
   * exactly that plaintext (a row already sealed, by another node, is left alone); returns how many were replaced.
   */
  sealSecrets(rows: readonly { id: string; plaintext: string; sealed: SealedValue }[]): Promise<number>;
  /**
   * Every sealed signing secret, `limit` at a time after `after` (null: from the start), in a stable order, for
   * master-key rotation; the context is `webhookSecretContext` of its webhook.
   */
  sealedSecrets(after: string | null, limit: number): Promise<SealedRef[]>;
  /** Replaces the sealed secret `ref` (same payload, data key re-wrapped under another master key); a deleted webhook is skipped. */
  rewrapSecret(ref: string, sealed: SealedValue): Promise<void>;
}
