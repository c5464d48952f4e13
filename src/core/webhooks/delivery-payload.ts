import { createHmac } from 'node:crypto';
import { isoTimestamp } from '../clock.ts';
import { prefixedId } from '../ids.ts';
import type { StoredEvent } from '../events/event.types.ts';
import { WEBHOOK_FLAVOURS } from './webhook-flavours.ts';
import type { ClaimedDelivery } from './webhook.types.ts';

/**
 * What one delivery attempt sends: the JSON body and the headers that sign it. The body is serialised once and
 * those exact bytes are signed and sent, so a receiver verifies the raw body it got.
 */
export const WEBHOOK_USER_AGENT = 'Mnemo-Webhooks/1.0';

export interface DeliveryRequest {
  body: string;
  headers: Record<string, string>;
  /** `dlv_…`, unique per attempt (X-Service-Delivery). */
  attemptId: string;
}

const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8');

/** G9 `X-Service-Signature`: hex HMAC-SHA256 of the body, keyed with the secret's UTF-8 bytes. */
export const hexSignature = (secret: string, body: string): string => hmac(secret, body).digest('hex');

/** G10 and G11 `X-Service-Signature`: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (Stripe's scheme). */
export const timestampedSignature = (secret: string, unixSeconds: number, body: string): string =>
  `t=${unixSeconds},v1=${hmac(secret, `${unixSeconds}.${body}`).digest('hex')}`;

/**
 * The Standard Webhooks key: a secret written `whsec_<base64>` (the standard's form) is keyed with the decoded
 * bytes, as every Standard Webhooks library does; any other secret with its UTF-8 bytes.
 */
export function standardWebhooksKey(secret: string): Buffer {
  const rest = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : null;
  if (rest !== null && rest.length > 0 && rest.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(rest)) {
    return Buffer.from(rest, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** Standard Webhooks `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. */
export const standardWebhooksSignature = (secret: string, id: string, unixSeconds: number, body: string): string =>
  `v1,${hmac(standardWebhooksKey(secret), `${id}.${unixSeconds}.${body}`).digest('base64')}`;

/** G9 body: the event plus which webhook and attempt this is; `livemode` false only for test-mode data. */
export const memoryEventBody = (event: StoredEvent, webhookId: string, attempt: number): string => JSON.stringify({
  id: event.id,
  type: event.type,
  created: isoTimestamp(event.createdAt),
  data: event.data,
  webhook_id: webhookId,
  attempt,
  livemode: event.scope.mode !== 'test',
});

/** G10 (and G11) body: `{id, type, created_at, data}`. */
export const genericEventBody = (event: StoredEvent): string => JSON.stringify({
  id: event.id,
  type: event.type,
  created_at: isoTimestamp(event.createdAt),
  data: event.data,
});

/** Body and headers of attempt `attempt` (1-based) of a claimed delivery, made at `at`, signed with `secret` (opened). */
export function buildDeliveryRequest(claim: Pick<ClaimedDelivery, 'webhook' | 'event'>, secret: string, attempt: number, at: Date): DeliveryRequest {
  const { webhook, event } = claim;
  const attemptId = prefixedId('dlv', 24);
  const unix = Math.floor(at.getTime() / 1000);
  const common = {
    'User-Agent': WEBHOOK_USER_AGENT,
    'Content-Type': 'application/json',
    'X-Service-Event': event.type,
    'X-Service-Delivery': attemptId,
  };
  if (WEBHOOK_FLAVOURS[webhook.kind].payload === 'generic') {
    const body = genericEventBody(event);
    return { body, attemptId, headers: { ...common, 'X-Service-Signature': timestampedSignature(secret, unix, body) } };
  }
  const body = memoryEventBody(event, webhook.id, attempt);
  return {
    body,
    attemptId,
    headers: {
      ...common,
      'X-Service-Signature': hexSignature(secret, body),
      // Standard Webhooks headers: a signed timestamp gives receivers replay protection the hex signature lacks.
      'webhook-id': event.id,
      'webhook-timestamp': String(unix),
      'webhook-signature': standardWebhooksSignature(secret, event.id, unix, body),
    },
  };
}
