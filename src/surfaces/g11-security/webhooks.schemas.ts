import { Type } from 'typebox';
import { SECURITY_EVENT_TYPES } from '../../core/events/event.types.ts';
import { MAX_WEBHOOK_URL_LENGTH } from '../../core/webhooks/webhook.service.ts';
import { Pagination } from './schemas.ts';

/**
 * G11 webhook wire schemas (`/v1/security/webhooks`): shapes and bounds here; the rules (URL policy, event names,
 * secret form) in core/webhooks/webhook.service.ts, which names every bad field at once.
 */

const Url = Type.String({
  maxLength: MAX_WEBHOOK_URL_LENGTH * 2,
  description: `http or https URL (at most ${MAX_WEBHOOK_URL_LENGTH} characters). IP literals and localhost outside public address space are refused unless allowed by the operator (MNEMO_WEBHOOK_ALLOW_CIDRS)`,
});
const Events = Type.Array(Type.String({ maxLength: 64 }), {
  minItems: 1, maxItems: 20, description: `Event types to receive (duplicates dropped): ${SECURITY_EVENT_TYPES.join(', ')}`,
});
const Secret = Type.String({
  maxLength: 256,
  description: 'Signing secret, 16-256 printable ASCII characters without spaces; absent: Mnemo generates whsec_ + base64 of 32 random bytes',
});
const Status = Type.Enum(['active', 'disabled'], {
  description: 'disabled: nothing is queued or delivered; active: resumes a disabled or failed webhook (failed is set by deliveries only)',
});

export const CreateWebhookBody = Type.Object({
  url: Url,
  events: Events,
  secret: Type.Optional(Secret),
}, { additionalProperties: false, description: 'The webhook belongs to the calling key\'s tenant and mode' });

export const UpdateWebhookBody = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  status: Type.Optional(Status),
}, { additionalProperties: false, description: 'Any of url, events, status; at least one. The secret cannot be changed' });

export const WebhookParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'whk_…' }) });

export const ListWebhooksQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'pagination.cursor of the previous page' })),
  event: Type.Optional(Type.String({ maxLength: 64, description: 'Only webhooks subscribed to this event type' })),
});

const Time = Type.String({ format: 'date-time' });
const WebhookWire = Type.Object({
  id: Type.String({ description: 'whk_…' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  status: Type.Enum(['active', 'disabled', 'failed'], { description: 'failed: set after a delivery\'s 7th failed attempt, or a 410 Gone' }),
  createdAt: Time,
  updatedAt: Time,
  lastDeliveryAt: Type.Union([Time, Type.Null()], { description: 'When the last delivery attempt ended' }),
  deliveryStats: Type.Object({ totalAttempts: Type.Integer(), successfulDeliveries: Type.Integer(), failedDeliveries: Type.Integer() }),
});
const CreatedWebhookWire = Type.Object({
  ...WebhookWire.properties,
  secret: Type.String({ description: 'The signing secret: shown in this answer only' }),
});

export const WebhookResponses = {
  webhook: WebhookWire,
  created: CreatedWebhookWire,
  list: Type.Object({ data: Type.Array(WebhookWire), pagination: Pagination }),
  deleted: Type.Null({ description: 'Deleted' }),
};
