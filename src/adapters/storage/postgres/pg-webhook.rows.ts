import type { KeyMode } from '../../../core/scope.ts';
import type { RetryPolicy, Webhook, WebhookKind, WebhookStatus } from '../../../core/webhooks/webhook.types.ts';

export interface PgWebhookRow {
  id: string; kind: string; tenant_id: string; mode: string; workspace: string | null; url: string;
  events: string[]; secret: string; description: string | null; status: string; retry_policy: RetryPolicy;
  filters: Record<string, unknown>; created_at: Date; updated_at: Date; last_delivery_at: Date | null;
  total_attempts: number; successful_deliveries: number; failed_deliveries: number;
}

export const toWebhook = (r: PgWebhookRow): Webhook => ({
  id: r.id,
  kind: r.kind as WebhookKind,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  url: r.url,
  events: r.events,
  secret: r.secret,
  description: r.description,
  status: r.status as WebhookStatus,
  retryPolicy: r.retry_policy,
  filters: r.filters,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastDeliveryAt: r.last_delivery_at,
  stats: { totalAttempts: r.total_attempts, successfulDeliveries: r.successful_deliveries, failedDeliveries: r.failed_deliveries },
});
