import type { KeyMode } from '../../../core/scope.ts';
import type { RetryPolicy, StoredWebhookSecret, Webhook, WebhookKind, WebhookStatus } from '../../../core/webhooks/webhook.types.ts';

/** The signing secret's columns: sealed, or plaintext in a row not yet sealed (see the migration). */
export interface PgWebhookSecretColumns {
  plaintext_secret: string | null; secret_key_id: string | null; secret_wrapped_key: string | null; secret_payload: string | null;
}

export interface PgWebhookRow extends PgWebhookSecretColumns {
  id: string; kind: string; tenant_id: string; mode: string; workspace: string | null; url: string;
  events: string[]; description: string | null; status: string; retry_policy: RetryPolicy;
  filters: Record<string, unknown>; created_at: Date; updated_at: Date; last_delivery_at: Date | null;
  total_attempts: number; successful_deliveries: number; failed_deliveries: number;
}

/** The webhook without its secret: only a claimed delivery carries that (storedSecretOf). */
export const toWebhook = (r: PgWebhookRow): Webhook => ({
  id: r.id,
  kind: r.kind as WebhookKind,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  url: r.url,
  events: r.events,
  description: r.description,
  status: r.status as WebhookStatus,
  retryPolicy: r.retry_policy,
  filters: r.filters,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastDeliveryAt: r.last_delivery_at,
  stats: { totalAttempts: r.total_attempts, successfulDeliveries: r.successful_deliveries, failedDeliveries: r.failed_deliveries },
});

/** A CHECK constraint keeps exactly one form per row. */
export const storedSecretOf = (r: PgWebhookSecretColumns): StoredWebhookSecret => (r.plaintext_secret !== null
  ? { plaintext: r.plaintext_secret }
  : { sealed: { keyId: r.secret_key_id!, wrappedKey: r.secret_wrapped_key!, payload: r.secret_payload! } });
