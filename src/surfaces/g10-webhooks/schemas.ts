import { Type } from 'typebox';
import { WebhookErrorWire } from '../http-kit/webhook-errors.ts';
import { GENERIC_EVENT_TYPES } from '../../core/events/event.types.ts';

/** G10 wire schemas (`/v1/webhooks`, `/v1/events`). Shapes and bounds here; rules (URL, event names) in the core. */

const Events = Type.Array(Type.String(), {
  minItems: 1, maxItems: 100,
  description: `Event types to receive (duplicates dropped): ${GENERIC_EVENT_TYPES.join(', ')}`,
});

const Url = Type.String({
  description: 'http or https URL (at most 2048 characters). IP literals and localhost outside public address space are refused unless allowed by the operator (MNEMO_WEBHOOK_ALLOW_CIDRS)',
});

const Description = Type.String({ description: 'Free text, at most 1000 characters' });

export const CreateBody = Type.Object({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
});

export const UpdateBody = Type.Object({
  events: Type.Optional(Events),
  status: Type.Optional(Type.Enum(['active', 'disabled'], {
    description: 'disabled: nothing is queued or delivered; active: resumes a disabled or failed webhook. failed is set by deliveries only (after the 7th failed attempt)',
  })),
  description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'null removes it' })),
  url: Type.Optional(Url),
}, { description: 'Any of events, status, description, url. At least one field.' });

export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128, description: 'whk_… id' }),
});

export const ListQuery = Type.Object({
  event: Type.Optional(Type.String({ description: 'Only webhooks subscribed to this event type' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
});

const Iso = Type.String({ description: 'ISO 8601 UTC' });

const WebhookFields = {
  id: Type.String({ description: 'whk_… id' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ description: 'active, disabled (by PATCH) or failed (after 7 failed attempts of a delivery)' }),
  created_at: Iso,
  updated_at: Iso,
};

export const WebhookWire = Type.Object(WebhookFields);
export const CreatedWebhookWire = Type.Object({
  ...WebhookFields,
  secret: Type.String({ description: 'Signing secret (whsec_…): returned only here' }),
});

export const PublishBody = Type.Object({
  type: Type.String({ description: `One of: ${GENERIC_EVENT_TYPES.join(', ')}` }),
  data: Type.Object({}, {
    additionalProperties: true,
    description: 'Any JSON object up to 64 KiB and 16 levels deep, relayed to receivers as given (e.g. for transfer events: id, reference, amount and fee as integers in minor units, currency, status, source_wallet_id, destination {type, account_number, bank_code, account_name}, completed_at)',
  }),
});

export const PublishHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    description: '1-255 printable characters. The first answer is kept 24 hours and returned again (with Idempotent-Replayed: true) for the same body; a different body is a 409',
  })),
});

export const EventWire = Type.Object({
  id: Type.String({ description: 'evt_… id; receivers use it to drop duplicate deliveries' }),
  type: Type.String(),
  created_at: Iso,
  data: Type.Object({}, { additionalProperties: true }),
});

const ok = <T extends object>(data: T) => Type.Object({ success: Type.Literal(true), data });

export const ErrorWire = WebhookErrorWire;

export const Responses = {
  created: ok(CreatedWebhookWire),
  webhook: ok(WebhookWire),
  list: ok(Type.Object({
    webhooks: Type.Array(WebhookWire),
    pagination: Type.Object({ total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean() }),
  })),
  deleted: ok(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })),
  event: ok(EventWire),
};
