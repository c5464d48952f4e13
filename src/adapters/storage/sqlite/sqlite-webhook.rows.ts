import type { KeyMode } from '../../../core/scope.ts';
import type { RetryPolicy, StoredWebhookSecret, Webhook, WebhookKind, WebhookStatus } from '../../../core/webhooks/webhook.types.ts';

/** The signing secret's columns: sealed, or plaintext in a row not yet sealed (see the migration). */
export interface WebhookSecretColumns {
  plaintext_secret: string | null; secret_key_id: string | null; secret_wrapped_key: string | null; secret_payload: string | null;
}

export interface WebhookRow extends WebhookSecretColumns {
  seq: number; id: string; kind: string; tenant_id: string; mode: string; workspace: string | null; url: string;
  events: string; description: string | null; status: string; retry_policy: string; filters: string;
  created_at: number; updated_at: number; last_delivery_at: number | null; total_attempts: number;
  successful_deliveries: number; failed_deliveries: number;
}

/** The webhook without its secret: only a claimed delivery carries that (storedSecretOf). */
export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  kind: r.kind as WebhookKind,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  url: r.url,
  events: JSON.parse(r.events) as string[],
  description: r.description,
  status: r.status as WebhookStatus,
  retryPolicy: JSON.parse(r.retry_policy) as RetryPolicy,
  filters: JSON.parse(r.filters) as Record<string, unknown>,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  lastDeliveryAt: r.last_delivery_at === null ? null : new Date(r.last_delivery_at),
  stats: { totalAttempts: r.total_attempts, successfulDeliveries: r.successful_deliveries, failedDeliveries: r.failed_deliveries },
});

/** A CHECK constraint keeps exactly one form per row. */
export const storedSecretOf = (r: WebhookSecretColumns): StoredWebhookSecret => (r.plaintext_secret !== null
  ? { plaintext: r.plaintext_secret }
  : { sealed: { keyId: r.secret_key_id!, wrappedKey: r.secret_wrapped_key!, payload: r.secret_payload! } });
