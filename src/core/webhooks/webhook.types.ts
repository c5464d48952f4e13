import type { EventScope, StoredEvent } from '../events/event.types.ts';
import type { SealedValue } from '../secrets/secret.types.ts';

/**
 * Webhooks of every generation live in one store: G9 (memory events, per workspace, `active` flag, retry policy,
 * filters), G10 (generic events, per tenant and mode, `status`, the fixed 7-attempt schedule) and G11 (the secrets
 * component's events, per tenant and mode, delivered as G10's are); webhook-flavours.ts says how each kind differs.
 */
export type WebhookKind = 'g9' | 'g10' | 'g11';
/** G10 status; G9's `active` maps to `active` / `disabled`. `failed` is set after the last failed attempt (G10). */
export type WebhookStatus = 'active' | 'disabled' | 'failed';

export interface RetryPolicy {
  maxAttempts: number;
  backoffMultiplier: number;
  maxDelayMs: number;
}

export const DEFAULT_G9_RETRY: RetryPolicy = { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 300_000 };

export interface DeliveryStats {
  totalAttempts: number;
  successfulDeliveries: number;
  failedDeliveries: number;
}

export interface Webhook {
  id: string;
  kind: WebhookKind;
  scope: EventScope;
  url: string;
  events: string[];
  description: string | null;
  status: WebhookStatus;
  retryPolicy: RetryPolicy;
  /** G9 filters on memory events: `tags` (any of), `memory_type`, other keys on metadata (see webhook-filters.ts). */
  filters: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  lastDeliveryAt: Date | null;
  stats: DeliveryStats;
}

/**
 * A webhook as its creation answers it: the only time its signing secret is shown. Storage keeps the secret sealed
 * (core/webhooks/webhook-secret.ts), never in a `Webhook`.
 */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

/**
 * A signing secret as a row holds it: sealed, or plaintext in a row written before secrets were sealed (until the
 * start-up migration, `sealPlaintextWebhookSecrets`, seals it).
 */
export type StoredWebhookSecret = { sealed: SealedValue } | { plaintext: string };

export interface WebhookPatch {
  url?: string | undefined;
  events?: string[] | undefined;
  description?: string | null | undefined;
  status?: WebhookStatus | undefined;
  retryPolicy?: RetryPolicy | undefined;
  filters?: Record<string, unknown> | undefined;
}

/** One (event, webhook) pair to deliver, with its attempts so far. */
export interface Delivery {
  id: string;
  webhookId: string;
  eventSeq: number;
  /** Attempts made before this one. */
  attempts: number;
  nextAttemptAt: Date;
}

/** A delivery as people look at it (the dashboard): its event, where it stands, and its attempts so far. */
export interface DeliveryRecord {
  id: string;
  webhookId: string;
  /** The event's id and type; null once the event log was pruned past it. */
  eventId: string | null;
  eventType: string | null;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** What a redelivery request found: the delivery made due again, one still pending (nothing to do), or none. */
export type RedeliveryOutcome = 'requeued' | 'pending' | 'not_found';

/** A delivery claimed by a worker (leased), with what it needs to send. */
export interface ClaimedDelivery {
  delivery: Delivery;
  webhook: Webhook;
  event: StoredEvent;
  /** The webhook's signing secret as stored; the worker opens it with the keyring (storage never does). */
  secret: StoredWebhookSecret;
}

export type DeliveryResult =
  | { ok: true; at: Date; status: number }
  /** `retryAt` null: no attempt left. `failWebhook`: the webhook itself becomes `failed` (G10 after 7 attempts, or a 410). */
  | { ok: false; at: Date; status: number | null; error: string; retryAt: Date | null; failWebhook: boolean };
