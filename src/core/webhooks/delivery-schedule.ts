import type { SendOutcome } from './webhook-sender.port.ts';
import { G10_RETRY_DELAYS_MS, WEBHOOK_FLAVOURS } from './webhook-flavours.ts';
import type { DeliveryResult, Webhook } from './webhook.types.ts';

export const G10_MAX_ATTEMPTS = G10_RETRY_DELAYS_MS.length + 1;

/** G9's first retry waits this long; each next one `backoffMultiplier` times longer, capped at `maxDelayMs`. */
const G9_FIRST_DELAY_MS = 1000;

/**
 * How long to wait before the next attempt after `attemptsMade` attempts (1-based: 1 after the first one failed),
 * or null when none is left.
 */
export function retryDelayMs(webhook: Pick<Webhook, 'kind' | 'retryPolicy'>, attemptsMade: number): number | null {
  const fixed = WEBHOOK_FLAVOURS[webhook.kind].retryDelaysMs;
  if (fixed !== null) return fixed[attemptsMade - 1] ?? null;
  const { maxAttempts, backoffMultiplier, maxDelayMs } = webhook.retryPolicy;
  if (attemptsMade >= Math.max(1, maxAttempts)) return null;
  const delay = G9_FIRST_DELAY_MS * Math.pow(Math.max(1, backoffMultiplier), attemptsMade - 1);
  // A policy's numbers come from users: never let NaN or Infinity reach a timestamp.
  return Math.round(Math.min(Number.isFinite(delay) ? delay : maxDelayMs, Math.max(0, maxDelayMs)));
}

const is2xx = (status: number): boolean => status >= 200 && status < 300;

function describeFailure(outcome: SendOutcome): string {
  if (outcome.status === null) return outcome.error;
  const why = outcome.status >= 300 && outcome.status < 400 ? ' (redirects are not followed)'
    : outcome.status === 410 ? ' Gone (the receiver asked to stop: webhook disabled)' : '';
  return `HTTP ${outcome.status}${why}${outcome.bodyExcerpt ? `: ${outcome.bodyExcerpt}` : ''}`;
}

/**
 * What an attempt's outcome means for its delivery. Any 2xx succeeds; anything else fails and is retried on the
 * webhook's schedule. A 410 Gone gives up at once and fails the webhook. When no attempt is left, a webhook whose
 * flavour says so is marked failed (G10 spec: "after 7 failed attempts the webhook is marked failed"); a G9 webhook
 * stays active.
 */
export function attemptResult(
  webhook: Pick<Webhook, 'kind' | 'retryPolicy'>, attemptsMade: number, outcome: SendOutcome, at: Date,
): DeliveryResult {
  if (outcome.status !== null && is2xx(outcome.status)) return { ok: true, at, status: outcome.status };
  const error = describeFailure(outcome);
  if (outcome.status === 410) return { ok: false, at, status: 410, error, retryAt: null, failWebhook: true };
  const delay = retryDelayMs(webhook, attemptsMade);
  return {
    ok: false, at, status: outcome.status, error,
    retryAt: delay === null ? null : new Date(at.getTime() + delay),
    failWebhook: delay === null && WEBHOOK_FLAVOURS[webhook.kind].failsWhenExhausted,
  };
}
