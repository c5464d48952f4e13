import { isoTimestamp } from '../../core/clock.ts';
import type { CreatedWebhook, Webhook } from '../../core/webhooks/webhook.types.ts';

/** A webhook as G11 shows it (camelCase): never its secret, except in the creation's answer (`toCreatedWebhookWire`). */
export const toWebhookWire = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  status: w.status,
  createdAt: isoTimestamp(w.createdAt),
  updatedAt: isoTimestamp(w.updatedAt),
  lastDeliveryAt: w.lastDeliveryAt ? isoTimestamp(w.lastDeliveryAt) : null,
  deliveryStats: { ...w.stats },
});
export const toCreatedWebhookWire = (w: CreatedWebhook) => ({ ...toWebhookWire(w), secret: w.secret });
