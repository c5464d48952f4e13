import { isoTimestamp } from '../../core/clock.ts';
import type { PublishedEvent } from '../../core/webhooks/event-publisher.ts';
import type { CreatedWebhook, Webhook } from '../../core/webhooks/webhook.types.ts';

/** G10 wire <-> domain. */

export const toWire = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  status: w.status,
  created_at: isoTimestamp(w.createdAt),
  updated_at: isoTimestamp(w.updatedAt),
});

/** The create answer: the only one with the secret. */
export const toCreatedWire = (w: CreatedWebhook) => ({ ...toWire(w), secret: w.secret });

export const toEventWire = (e: PublishedEvent) => ({ id: e.id, type: e.type, created_at: isoTimestamp(e.createdAt), data: e.data });
