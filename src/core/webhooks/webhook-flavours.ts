import { GENERIC_EVENT_TYPES, MEMORY_EVENT_TYPES, SECURITY_EVENT_TYPES } from '../events/event.types.ts';
import { DEFAULT_G9_RETRY, type RetryPolicy, type WebhookKind } from './webhook.types.ts';

/**
 * What each kind of webhook is: the service, the delivery worker and the stores read these records instead of
 * branching on the kind, so a new kind is a new record.
 */

/** Optional input fields (their wire names), in the order the problems name those a flavour refuses. */
export const OPTIONAL_WEBHOOK_FIELDS = {
  retryPolicy: 'retry_policy', filters: 'filters', secret: 'secret', description: 'description', active: 'active',
} as const;
export type OptionalWebhookField = keyof typeof OPTIONAL_WEBHOOK_FIELDS;

/** G10's fixed schedule (spec "Retry (G10)"): the delay before attempts 2 to 7. */
export const G10_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000] as const;

/** The retry policy stored with a webhook on the fixed schedule (7 attempts, the last 24 h after the previous). */
export const G10_RETRY: RetryPolicy = { maxAttempts: G10_RETRY_DELAYS_MS.length + 1, backoffMultiplier: 1, maxDelayMs: 86_400_000 };

export interface WebhookFlavour {
  /** The event types it may subscribe to. */
  eventTypes: readonly string[];
  /** Its ids are `<idPrefix>_…`. */
  idPrefix: string;
  /** `workspace`: it belongs to one workspace of a tenant and mode; `tenant`: to the tenant and mode (workspace null). */
  scoped: 'workspace' | 'tenant';
  /** The optional input fields it takes; the others are refused (a surface's schema refuses them first). */
  accepts: readonly OptionalWebhookField[];
  /** A new webhook's retry policy: a default the caller may change when `accepts` has `retryPolicy`, else fixed. */
  retryPolicy: RetryPolicy;
  /** The delay before each retry whatever the policy says, or null: backoff by the webhook's retry policy. */
  retryDelaysMs: readonly number[] | null;
  /** Whether the webhook becomes `failed` when a delivery has no attempt left. */
  failsWhenExhausted: boolean;
  /** `memory`: G9's body, hex signature and Standard Webhooks headers; `generic`: `{id, type, created_at, data}`, `t=…,v1=…`. */
  payload: 'memory' | 'generic';
  /** The operation that creates one (core/operations: its permission and quota). */
  createOperation: 'webhook.create' | 'security_webhook.create';
}

/** How G10 webhooks are delivered, which G11 ones share. */
const GENERIC_DELIVERY = { retryPolicy: G10_RETRY, retryDelaysMs: G10_RETRY_DELAYS_MS, failsWhenExhausted: true, payload: 'generic' } as const;

export const WEBHOOK_FLAVOURS: Readonly<Record<WebhookKind, WebhookFlavour>> = {
  /** G9: memory events. */
  g9: {
    eventTypes: MEMORY_EVENT_TYPES, idPrefix: 'webhook', scoped: 'workspace', accepts: ['retryPolicy', 'filters', 'secret', 'active'], createOperation: 'webhook.create',
    retryPolicy: DEFAULT_G9_RETRY, retryDelaysMs: null, failsWhenExhausted: false, payload: 'memory',
  },
  /** G10: generic events. */
  g10: { eventTypes: GENERIC_EVENT_TYPES, idPrefix: 'whk', scoped: 'tenant', accepts: ['description', 'active'], createOperation: 'webhook.create', ...GENERIC_DELIVERY },
  /** G11: the secrets component's events. */
  g11: { eventTypes: SECURITY_EVENT_TYPES, idPrefix: 'whk', scoped: 'tenant', accepts: ['secret'], createOperation: 'security_webhook.create', ...GENERIC_DELIVERY },
};
