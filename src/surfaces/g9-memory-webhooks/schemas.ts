import { Type } from 'typebox';
import { WebhookErrorWire } from '../http-kit/webhook-errors.ts';
import { MEMORY_EVENT_TYPES } from '../../core/events/event.types.ts';

/** G9 wire schemas (`/api/v1/webhooks`). Shapes and bounds here; rules (URL, event names, filters) in the core. */

const Events = Type.Array(Type.String(), {
  minItems: 1, maxItems: 100,
  description: `Event types to receive (duplicates dropped): ${MEMORY_EVENT_TYPES.join(', ')}`,
});

const Url = Type.String({
  description: 'http or https URL (at most 2048 characters). IP literals and localhost outside public address space are refused unless allowed by the operator (MNEMO_WEBHOOK_ALLOW_CIDRS)',
});

const RetryPolicyInput = Type.Object({
  max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Attempts in all, including the first (default 3)' })),
  backoff_multiplier: Type.Optional(Type.Number({ minimum: 1, maximum: 10, description: 'Each retry waits this many times longer than the previous; the first waits 1 s (default 2)' })),
  max_delay: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'Longest wait between attempts, in seconds (default 300)' })),
}, { description: 'Fields left out take the defaults on create and keep their current values on update' });

const Filters = Type.Object({}, {
  additionalProperties: true,
  description: 'Memory events only. tags: a string or array (the memory has any of them); memory_type (or type): a string or array; any other key: a top-level metadata key whose value is a string, number or boolean, or an array of them (equal to any). At most 20 keys; arrays of 1-100 values. All keys must hold.',
});

export const CreateBody = Type.Object({
  url: Url,
  events: Events,
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 256, description: 'Signing secret, 16-256 printable characters without spaces; generated (whsec_…) when absent' })),
  active: Type.Optional(Type.Boolean({ description: 'Default true' })),
  retry_policy: Type.Optional(RetryPolicyInput),
  filters: Type.Optional(Filters),
});

export const UpdateBody = Type.Object({
  events: Type.Optional(Events),
  active: Type.Optional(Type.Boolean({ description: 'true also resumes a webhook that deliveries marked failed' })),
  retry_policy: Type.Optional(RetryPolicyInput),
  url: Type.Optional(Url),
  filters: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Replaces the filters ({} removes them)' })),
}, { description: 'Any of events, active, retry_policy; url and filters too (beyond the spec). At least one field.' });

export const IdParams = Type.Object({
  webhook_id: Type.String({ minLength: 1, maxLength: 128, description: 'webhook_… id' }),
});

export const ListQuery = Type.Object({
  active: Type.Optional(Type.Boolean({ description: 'true: active webhooks only; false: the others (disabled or failed)' })),
  event: Type.Optional(Type.String({ description: 'Only webhooks subscribed to this event type' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
});

const Iso = Type.String({ description: 'ISO 8601 UTC' });

const ListItemFields = {
  id: Type.String({ description: 'webhook_… id' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  active: Type.Boolean(),
  created_at: Iso,
  updated_at: Iso,
  last_delivery: Type.Union([Iso, Type.Null()], { description: 'When the last delivery attempt ended, or null' }),
  delivery_stats: Type.Object({
    total_attempts: Type.Integer(),
    successful_deliveries: Type.Integer(),
    failed_deliveries: Type.Integer({ description: 'Deliveries given up after their last attempt' }),
  }),
};

const WebhookFields = {
  ...ListItemFields,
  retry_policy: Type.Object({
    max_attempts: Type.Integer(),
    backoff_multiplier: Type.Number(),
    max_delay: Type.Number({ description: 'seconds' }),
  }),
  filters: Type.Object({}, { additionalProperties: true }),
};

export const WebhookWire = Type.Object(WebhookFields);
export const CreatedWebhookWire = Type.Object({
  ...WebhookFields,
  secret: Type.String({ description: 'Signing secret: returned only here' }),
});
export const ListItemWire = Type.Object(ListItemFields);

const ok = <T extends object>(data: T) => Type.Object({ success: Type.Literal(true), data });

export const ErrorWire = WebhookErrorWire;

export const Responses = {
  created: ok(CreatedWebhookWire),
  webhook: ok(WebhookWire),
  list: ok(Type.Object({
    webhooks: Type.Array(ListItemWire),
    pagination: Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean() }),
  })),
  deleted: ok(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })),
};
