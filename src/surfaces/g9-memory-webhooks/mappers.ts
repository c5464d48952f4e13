import type { Static } from 'typebox';
import { isoTimestamp } from '../../core/clock.ts';
import type { NewWebhookInput, RetryPolicyInput, WebhookUpdateInput } from '../../core/webhooks/webhook.service.ts';
import type { CreatedWebhook, Webhook } from '../../core/webhooks/webhook.types.ts';
import type { CreateBody, UpdateBody } from './schemas.ts';

/** G9 wire <-> domain. */

interface RetryPolicyWire { max_attempts?: number | undefined; backoff_multiplier?: number | undefined; max_delay?: number | undefined }

const retryPolicyIn = (p: RetryPolicyWire | undefined): RetryPolicyInput | undefined =>
  p === undefined ? undefined : { maxAttempts: p.max_attempts, backoffMultiplier: p.backoff_multiplier, maxDelaySeconds: p.max_delay };

export function toNewWebhook(body: Static<typeof CreateBody>): NewWebhookInput {
  return {
    url: body.url, events: body.events, secret: body.secret, active: body.active,
    retryPolicy: retryPolicyIn(body.retry_policy), filters: body.filters as Record<string, unknown> | undefined,
  };
}

export function toUpdate(body: Static<typeof UpdateBody>): WebhookUpdateInput {
  return {
    events: body.events,
    status: body.active === undefined ? undefined : body.active ? 'active' : 'disabled',
    retryPolicy: retryPolicyIn(body.retry_policy),
    url: body.url,
    filters: body.filters as Record<string, unknown> | undefined,
  };
}

/** A list item: no secret, retry_policy or filters (spec). */
export const toListItem = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  active: w.status === 'active',
  created_at: isoTimestamp(w.createdAt),
  updated_at: isoTimestamp(w.updatedAt),
  last_delivery: w.lastDeliveryAt ? isoTimestamp(w.lastDeliveryAt) : null,
  delivery_stats: {
    total_attempts: w.stats.totalAttempts,
    successful_deliveries: w.stats.successfulDeliveries,
    failed_deliveries: w.stats.failedDeliveries,
  },
});

/** The whole webhook except its secret (get, update). */
export const toWire = (w: Webhook) => ({
  ...toListItem(w),
  retry_policy: {
    max_attempts: w.retryPolicy.maxAttempts,
    backoff_multiplier: w.retryPolicy.backoffMultiplier,
    max_delay: w.retryPolicy.maxDelayMs / 1000,
  },
  filters: w.filters,
});

/** The create answer: the only one with the secret. */
export const toCreatedWire = (w: CreatedWebhook) => ({ ...toWire(w), secret: w.secret });
