import type { SendOutcome } from './webhook-sender.port.ts';
import { deliveredAsGeneric, type DeliveryResult, type Webhook } from './webhook.types.ts';

/** G10's fixed schedule (spec "Retry (G10)"), which G11 webhooks follow too: the delay before attempts 2 to 7. */
export const G10_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000] as const;
export const G10_MAX_ATTEMPTS = G10_RETRY_DELAYS_MS.length + 1;

/** G9's first retry waits this long; each next one `backoffMultiplier` times longer, capped at `maxDelayMs`. */
const G9_FIRST_DELAY_MS = 1000;

/**
 * How long to wait before the next attempt after `attemptsMade` attempts (1-based: 1 after the first one failed),
 * or null when none is left.
 */
export function retryDelayMs(webhook: Pick<Webhook, 'kind' | 'retryPolicy'>, attemptsMade: number): number | null {
  if (deliveredAsGeneric(webhook.kind)) return G10_RETRY_DELAYS_MS[attemptsMade - 1] ?? null;
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
 * webhook's schedule. A 410 Gone gives up at once and fails the webhook. When no attempt is left, a G10 (or G11)
 * webhook is marked failed (spec: "after 7 failed attempts the webhook is marked failed"); a G9 webhook stays active.
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
    failWebhook: delay === null && deliveredAsGeneric(webhook.kind),
  };
}
