import type { KeyMode } from '../../../core/scope.ts';
import type { RetryPolicy, Webhook, WebhookKind, WebhookStatus } from '../../../core/webhooks/webhook.types.ts';

export interface WebhookRow {
  seq: number; id: string; kind: string; tenant_id: string; mode: string; workspace: string | null; url: string;
  events: string; secret: string; description: string | null; status: string; retry_policy: string; filters: string;
  created_at: number; updated_at: number; last_delivery_at: number | null; total_attempts: number;
  successful_deliveries: number; failed_deliveries: number;
}

export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  kind: r.kind as WebhookKind,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  url: r.url,
  events: JSON.parse(r.events) as string[],
  secret: r.secret,
  description: r.description,
  status: r.status as WebhookStatus,
  retryPolicy: JSON.parse(r.retry_policy) as RetryPolicy,
  filters: JSON.parse(r.filters) as Record<string, unknown>,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  lastDeliveryAt: r.last_delivery_at === null ? null : new Date(r.last_delivery_at),
  stats: { totalAttempts: r.total_attempts, successfulDeliveries: r.successful_deliveries, failedDeliveries: r.failed_deliveries },
});
