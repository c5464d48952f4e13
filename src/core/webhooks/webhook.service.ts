import { chargeQuota } from '../operations/quota.ts';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem, type FieldReason } from '../errors.ts';
import type { EventScope } from '../events/event.types.ts';
import { prefixedId } from '../ids.ts';
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenKeySegment } from '../json-limits.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import type { Keyring } from '../secrets/envelope.ts';
import type { WebhookRepository } from './webhook.repository.ts';
import { sealWebhookSecret } from './webhook-secret.ts';
import type {
  CreatedWebhook, DeliveryRecord, RetryPolicy, Webhook, WebhookKind, WebhookPatch, WebhookStatus,
} from './webhook.types.ts';
import { OPTIONAL_WEBHOOK_FIELDS, WEBHOOK_FLAVOURS, type OptionalWebhookField } from './webhook-flavours.ts';
import { checkWebhookUrl, parseAllowCidrs } from './address-policy.ts';

/**
 * Managing webhooks of every kind (no delivery here), each as its flavour (webhook-flavours.ts) says: its events,
 * scope, id prefix and the optional fields it takes. Field names in problems are the wire's (snake_case for G9 and
 * G10; G11's are single words, the same in both styles).
 */

export const RETRY_BOUNDS = {
  maxAttempts: { min: 1, max: 10 },
  backoffMultiplier: { min: 1, max: 10 },
  maxDelaySeconds: { min: 1, max: 86_400 },
} as const;

export const SECRET_PATTERN = /^[\x21-\x7E]{16,256}$/;
export const MAX_DESCRIPTION_LENGTH = 1000;
export const MAX_FILTER_KEYS = 20;
export const MAX_FILTER_VALUES = 100;
const FILTER_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type FilterScalar = string | number | boolean;
export type WebhookFilters = Record<string, FilterScalar | FilterScalar[]>;

/** Retry policy as a caller gives it: any of the three, in seconds for the delay. */
export interface RetryPolicyInput {
  maxAttempts?: number | undefined;
  backoffMultiplier?: number | undefined;
  maxDelaySeconds?: number | undefined;
}

export interface NewWebhookInput {
  url: string;
  events: readonly string[];
  /** G9 and G11; generated when absent. */
  secret?: string | undefined;
  /** G9 `active: false` creates it `disabled`. G10 webhooks start `active`. */
  active?: boolean | undefined;
  retryPolicy?: RetryPolicyInput | undefined;
  filters?: Record<string, unknown> | undefined;
  /** G10 only. */
  description?: string | null | undefined;
}

export interface WebhookUpdateInput {
  url?: string | undefined;
  events?: readonly string[] | undefined;
  /** `failed` is set by deliveries only; `active` resumes a failed or disabled webhook. */
  status?: 'active' | 'disabled' | undefined;
  /** G9: fields left out keep their current values. */
  retryPolicy?: RetryPolicyInput | undefined;
  /** G9: replaces the filters. */
  filters?: Record<string, unknown> | undefined;
  /** G10: null clears it. */
  description?: string | null | undefined;
}

export interface WebhookListInput {
  active?: boolean | undefined;
  event?: string | undefined;
  limit: number;
  offset: number;
}

export interface WebhookServiceDeps {
  webhooks: Pick<WebhookRepository, 'insert' | 'findById' | 'list' | 'update' | 'delete' | 'listDeliveries' | 'redeliver'>;
  limits: Pick<LimitsService, 'webhookCreate'>;
  clock: Clock;
  /** Seals each new webhook's signing secret before it reaches storage. */
  keyring: () => Keyring;
  /** `MNEMO_WEBHOOK_ALLOW_CIDRS`: ranges a webhook URL may point at although they are not public. */
  allowCidrs?: readonly string[] | undefined;
}

export type WebhookService = ReturnType<typeof createWebhookService>;

const eventTypesOf = (kind: WebhookKind): readonly string[] => WEBHOOK_FLAVOURS[kind].eventTypes;
const accepts = (kind: WebhookKind, field: OptionalWebhookField): boolean => WEBHOOK_FLAVOURS[kind].accepts.includes(field);

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks secret form). */
export const generateSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const notFound = (id: string) => new DomainError('NOT_FOUND', `No webhook with id ${id}`, { resource: 'webhook', id });

const scopeFor = (scope: EventScope, kind: WebhookKind): EventScope =>
  WEBHOOK_FLAVOURS[kind].scoped === 'workspace' ? scope : { tenantId: scope.tenantId, mode: scope.mode, workspace: null };

function checkEvents(raw: readonly string[], kind: WebhookKind, problems: FieldProblem[]): string[] {
  const known = eventTypesOf(kind);
  if (raw.length === 0) {
    problems.push({ field: 'events', reason: 'empty', message: `must name at least one event type (${known.join(', ')})` });
    return [];
  }
  const out: string[] = [];
  raw.forEach((type, i) => {
    if (!known.includes(type)) problems.push({ field: `events[${i}]`, reason: 'not_found', message: `unknown event type "${type}"; one of: ${known.join(', ')}` });
    else if (!out.includes(type)) out.push(type);
  });
  return out;
}

function checkRetryPolicy(input: RetryPolicyInput, base: RetryPolicy, problems: FieldProblem[]): RetryPolicy {
  const check = (value: number | undefined, name: string, bounds: { min: number; max: number }, integer: boolean) => {
    if (value === undefined) return;
    if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < bounds.min || value > bounds.max) {
      problems.push({ field: `retry_policy.${name}`, reason: 'out_of_range', message: `must be ${integer ? 'an integer' : 'a number'} from ${bounds.min} to ${bounds.max}` });
    }
  };
  check(input.maxAttempts, 'max_attempts', RETRY_BOUNDS.maxAttempts, true);
  check(input.backoffMultiplier, 'backoff_multiplier', RETRY_BOUNDS.backoffMultiplier, false);
  check(input.maxDelaySeconds, 'max_delay', RETRY_BOUNDS.maxDelaySeconds, true);
  return {
    maxAttempts: input.maxAttempts ?? base.maxAttempts,
    backoffMultiplier: input.backoffMultiplier ?? base.backoffMultiplier,
    maxDelayMs: input.maxDelaySeconds === undefined ? base.maxDelayMs : input.maxDelaySeconds * 1000,
  };
}

const isScalar = (v: unknown): v is FilterScalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/**
 * G9 filters on memory events (see webhook-filters.ts): `tags` (a string or an array of strings: the memory has any
 * of them), `memory_type` / `type` (a string or an array: any of them), any other top-level metadata key (a string,
 * number or boolean, or an array of them: equal to any). Arrays hold 1-100 values; at most 20 keys.
 */
export function checkFilters(raw: Record<string, unknown>, problems: FieldProblem[]): WebhookFilters {
  const out: WebhookFilters = {};
  const entries = Object.entries(raw);
  if (entries.length > MAX_FILTER_KEYS) problems.push({ field: 'filters', reason: 'too_many', message: `at most ${MAX_FILTER_KEYS} keys` });
  for (const [key, value] of entries) {
    const field = `filters.${key}`;
    const stringsOnly = key === 'tags' || key === 'memory_type' || key === 'type';
    if (!FILTER_KEY_PATTERN.test(key)) {
      problems.push({ field, reason: 'invalid_format', message: 'keys are 1-64 letters, digits, _ and - (top-level metadata keys)' });
      continue;
    }
    if (hasForbiddenKeySegment(key)) {
      problems.push({ field, reason: 'not_allowed', message: FORBIDDEN_KEY_MESSAGE });
      continue;
    }
    const ok = (v: unknown) => (stringsOnly ? typeof v === 'string' && v.length > 0 : isScalar(v));
    if (ok(value)) out[key] = value as FilterScalar;
    else if (Array.isArray(value) && value.length >= 1 && value.length <= MAX_FILTER_VALUES && value.every(ok)) out[key] = value as FilterScalar[];
    else {
      problems.push({
        field,
        reason: 'invalid_value', message: stringsOnly
          ? `must be a non-empty string or an array of 1-${MAX_FILTER_VALUES} of them`
          : `must be a string, number or boolean, or an array of 1-${MAX_FILTER_VALUES} of them`,
      });
    }
  }
  return out;
}

function checkDescription(raw: string | null | undefined, problems: FieldProblem[]): string | null | undefined {
  if (typeof raw === 'string' && raw.length > MAX_DESCRIPTION_LENGTH) {
    problems.push({ field: 'description', reason: 'too_long', message: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` });
  }
  return raw;
}

/** A surface's schema refuses the fields its kind does not take first; this keeps the core honest. */
function refuseForKind(kind: WebhookKind, input: NewWebhookInput | WebhookUpdateInput, problems: FieldProblem[]): void {
  for (const [prop, field] of Object.entries(OPTIONAL_WEBHOOK_FIELDS) as [OptionalWebhookField, string][]) {
    if (!accepts(kind, prop) && (input as Record<string, unknown>)[prop] !== undefined) {
      problems.push({ field, reason: 'not_allowed', message: 'is not supported by this API' });
    }
  }
}

export function createWebhookService(deps: WebhookServiceDeps) {
  const { webhooks, limits, clock } = deps;
  const allow = parseAllowCidrs(deps.allowCidrs ?? []);

  /**
   * http or https, at most 2048 characters, parseable by the WHATWG URL parser, without credentials, and — a cheap
   * early check — not an IP literal (or `localhost`) outside public unicast space unless allow-listed. Host names
   * are checked again, on the addresses they resolve to, at every delivery.
   */
  function checkUrl(raw: string, problems: FieldProblem[]): string {
    const url = raw.trim();
    const problem = (reason: FieldReason, message: string) => { problems.push({ field: 'url', reason, message }); return url; };
    if (url.length === 0) return problem('required', 'is required (an http or https URL)');
    if (url.length > MAX_WEBHOOK_URL_LENGTH) return problem('too_long', `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return problem('invalid_format', 'must be an absolute http or https URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return problem('invalid_format', 'must use the http or https scheme');
    if (parsed.username !== '' || parsed.password !== '') return problem('not_allowed', 'must not contain credentials (user:password@)');
    const refused = checkWebhookUrl(url, allow);
    return refused === null ? url : problem('not_allowed', refused);
  }

  return {
    /**
     * Validates, counts the creation against the key's hourly limit (valid requests only), then stores it with its
     * secret sealed. The answer is the only one that carries the secret.
     */
    async create(principal: Principal, scope: EventScope, kind: WebhookKind, input: NewWebhookInput): Promise<CreatedWebhook> {
      const problems: FieldProblem[] = [];
      refuseForKind(kind, input, problems);
      const url = checkUrl(input.url, problems);
      const events = checkEvents(input.events, kind, problems);
      if (input.secret !== undefined && !SECRET_PATTERN.test(input.secret)) {
        problems.push({ field: 'secret', reason: 'invalid_format', message: 'must be 16-256 printable characters without spaces' });
      }
      const flavour = WEBHOOK_FLAVOURS[kind];
      const retryPolicy = accepts(kind, 'retryPolicy')
        ? checkRetryPolicy(input.retryPolicy ?? {}, flavour.retryPolicy, problems) : flavour.retryPolicy;
      const filters = accepts(kind, 'filters') && input.filters ? checkFilters(input.filters, problems) : {};
      const description = accepts(kind, 'description') ? checkDescription(input.description, problems) ?? null : null;
      if (problems.length > 0) throw validationError(problems);

      await chargeQuota(limits, flavour.createOperation, principal);
      const now = clock.now();
      const webhook: Webhook = {
        id: prefixedId(flavour.idPrefix, 24),
        kind,
        scope: scopeFor(scope, kind),
        url,
        events,
        description,
        status: input.active === false ? 'disabled' : 'active',
        retryPolicy,
        filters,
        createdAt: now,
        updatedAt: now,
        lastDeliveryAt: null,
        stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
      };
      const secret = input.secret ?? generateSecret();
      await webhooks.insert(webhook, sealWebhookSecret(deps.keyring(), webhook, secret));
      return { ...webhook, secret };
    },

    async get(scope: EventScope, kind: WebhookKind, id: string): Promise<Webhook> {
      const found = await webhooks.findById(scopeFor(scope, kind), kind, id);
      if (!found) throw notFound(id);
      return found;
    },

    /** Oldest first; `active` false lists disabled and failed ones. */
    async list(scope: EventScope, kind: WebhookKind, query: WebhookListInput): Promise<{ items: Webhook[]; total: number }> {
      if (query.event !== undefined && !eventTypesOf(kind).includes(query.event)) {
        throw validationError([{ field: 'event', reason: 'not_found', message: `unknown event type; one of: ${eventTypesOf(kind).join(', ')}` }]);
      }
      return webhooks.list(scopeFor(scope, kind), kind, query);
    },

    async update(scope: EventScope, kind: WebhookKind, id: string, input: WebhookUpdateInput): Promise<Webhook> {
      const s = scopeFor(scope, kind);
      const problems: FieldProblem[] = [];
      refuseForKind(kind, input, problems);
      const given = Object.values(input).some((v) => v !== undefined);
      if (!given) problems.push({ field: 'body', reason: 'empty', message: 'give at least one field to change' });
      const patch: WebhookPatch = {};
      if (input.url !== undefined) patch.url = checkUrl(input.url, problems);
      if (input.events !== undefined) patch.events = checkEvents(input.events, kind, problems);
      if (input.status !== undefined) {
        if (input.status !== 'active' && input.status !== 'disabled') {
          problems.push({ field: 'status', reason: 'invalid_value', message: 'must be active or disabled (failed is set by deliveries only)' });
        } else patch.status = input.status satisfies WebhookStatus;
      }
      if (accepts(kind, 'filters') && input.filters !== undefined) patch.filters = checkFilters(input.filters, problems);
      if (accepts(kind, 'description') && input.description !== undefined) patch.description = checkDescription(input.description, problems);
      let current: Webhook | null = null;
      if (accepts(kind, 'retryPolicy') && input.retryPolicy !== undefined) {
        // Fields of the policy left out keep their current values, so the webhook is read first.
        current = await webhooks.findById(s, kind, id);
        patch.retryPolicy = checkRetryPolicy(input.retryPolicy, current?.retryPolicy ?? WEBHOOK_FLAVOURS[kind].retryPolicy, problems);
      }
      if (problems.length > 0) {
        // An unknown id answers 404 before the body's problems, as it would for a valid body.
        if (current === null && !(await webhooks.findById(s, kind, id))) throw notFound(id);
        throw validationError(problems);
      }
      const updated = await webhooks.update(s, kind, id, patch, clock.now());
      if (!updated) throw notFound(id);
      return updated;
    },

    async delete(scope: EventScope, kind: WebhookKind, id: string): Promise<void> {
      if (!(await webhooks.delete(scopeFor(scope, kind), kind, id))) throw notFound(id);
    },

    /** A webhook's deliveries, newest first (404 for a webhook not in the scope). */
    async deliveries(scope: EventScope, kind: WebhookKind, id: string, page: { limit: number; offset: number }):
      Promise<{ webhook: Webhook; items: DeliveryRecord[]; total: number }> {
      const s = scopeFor(scope, kind);
      const webhook = await webhooks.findById(s, kind, id);
      if (!webhook) throw notFound(id);
      return { webhook, ...(await webhooks.listDeliveries(s, kind, id, page)) };
    },

    /**
     * Sends a finished delivery once more, as soon as a worker is free (the dashboard's redeliver). Only for an
     * active webhook (a disabled or failed one is not delivered to: it must be re-enabled first); a delivery still
     * pending is already on its way (409).
     */
    async redeliver(scope: EventScope, kind: WebhookKind, id: string, deliveryId: string): Promise<void> {
      const s = scopeFor(scope, kind);
      const webhook = await webhooks.findById(s, kind, id);
      if (!webhook) throw notFound(id);
      if (webhook.status !== 'active') {
        throw new DomainError('CONFLICT', `Webhook ${id} is ${webhook.status}: enable it before redelivering`, { status: webhook.status });
      }
      const outcome = await webhooks.redeliver(s, kind, id, deliveryId, clock.now());
      if (outcome === 'not_found') throw new DomainError('NOT_FOUND', `Delivery ${JSON.stringify(deliveryId)} of webhook ${id} not found`);
      if (outcome === 'pending') throw new DomainError('CONFLICT', `Delivery ${deliveryId} is still pending: it will be attempted again anyway`);
    },
  };
}
