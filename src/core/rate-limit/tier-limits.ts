import type { Principal, Tier } from '../api-keys/api-key.types.ts';
import { DomainError, type DomainErrorCode } from '../errors.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.port.ts';

/** A limit per window; null means unlimited. */
export interface WindowLimit {
  limit: number | null;
  windowMs: number;
}

const MINUTE = 60_000;
/** When the limiter itself fails, clients are told to try again after this long. */
export const LIMITER_RETRY_AFTER_MS = 1000;
const HOUR = 60 * MINUTE;

/** The spec's Limits table. Enterprise is "custom": unlimited unless the operator configures a number. */
export interface TierLimitPolicy {
  gateway: Record<Tier, WindowLimit>;
  memoryWrites: Record<Tier, WindowLimit>;
  embeddings: Record<Tier, WindowLimit>;
  /** Batch requests (G6): the same for every tier. */
  batches: WindowLimit;
  /** Webhook creations (G9, G10 and G11 share one bucket per key): the same for every tier. */
  webhookCreations: WindowLimit;
  /** Every G11 request (`/v1/security`): the spec's standard (free) 1000 and pro 10000 an hour. */
  security: Record<Tier, WindowLimit>;
}

export function defaultTierLimits(enterprise: { gatewayPerMinute?: number | null } = {}): TierLimitPolicy {
  return {
    gateway: {
      free: { limit: 60, windowMs: MINUTE },
      pro: { limit: 300, windowMs: MINUTE },
      enterprise: { limit: enterprise.gatewayPerMinute ?? null, windowMs: MINUTE },
    },
    memoryWrites: {
      free: { limit: 100, windowMs: HOUR },
      pro: { limit: 1000, windowMs: HOUR },
      enterprise: { limit: null, windowMs: HOUR },
    },
    batches: { limit: 10, windowMs: MINUTE },
    webhookCreations: { limit: 10, windowMs: HOUR },
    embeddings: {
      free: { limit: 1000, windowMs: HOUR },
      pro: { limit: 10_000, windowMs: HOUR },
      enterprise: { limit: null, windowMs: HOUR },
    },
    security: {
      free: { limit: 1000, windowMs: HOUR },
      pro: { limit: 10_000, windowMs: HOUR },
      // "Custom" in the spec: a documented default, so that every G11 answer can carry its X-RateLimit headers.
      enterprise: { limit: 100_000, windowMs: HOUR },
    },
  };
}

export type LimitsService = ReturnType<typeof createLimitsService>;

export function createLimitsService(deps: { limiter: RateLimiter; policy: TierLimitPolicy }) {
  const { limiter, policy } = deps;

  async function check(
    bucket: string, principal: Principal, rule: WindowLimit, code: DomainErrorCode, what: string,
  ): Promise<RateDecision | null> {
    if (rule.limit === null) return null;
    let decision: RateDecision;
    try {
      decision = await limiter.hit(`${bucket}:${principal.keyId}`, rule.limit, rule.windowMs);
    } catch {
      // The counters are out of reach (a shared store down; its client reports the outage): refuse for now rather
      // than count nothing, without telling the client why.
      throw new DomainError('OVERLOADED', 'Rate limits cannot be checked right now; try again shortly', {
        retryAfterMs: LIMITER_RETRY_AFTER_MS,
      });
    }
    if (!decision.allowed) {
      throw new DomainError(code, `${what} limit of ${rule.limit} per ${describeWindow(rule.windowMs)} exceeded`, {
        limit: { ...decision, bucket },
      });
    }
    return decision;
  }

  return {
    /** The platform gateway: every request of a key, on every surface. */
    gateway: (p: Principal) => check('gateway', p, policy.gateway[p.tier], 'RATE_LIMITED', 'Request rate'),
    /** Memory writes (create, update, delete on G1 and G2): an hourly quota. */
    memoryWrite: (p: Principal) =>
      check('memory-writes', p, policy.memoryWrites[p.tier], 'QUOTA_EXCEEDED', 'Memory write'),
    /** Batch requests (G6): 10 a minute per key. */
    batch: (p: Principal) => check('batches', p, policy.batches, 'RATE_LIMITED', 'Batch request'),
    /** Webhook creations (G9 `POST /api/v1/webhooks`, G10 `POST /v1/webhooks`): 10 an hour per key, one bucket. */
    webhookCreate: (p: Principal) => check('webhook-creations', p, policy.webhookCreations, 'RATE_LIMITED', 'Webhook creation'),
    /** Every G11 request: an hourly limit per key. */
    security: (p: Principal) => check('security', p, policy.security[p.tier], 'RATE_LIMITED', 'Request rate'),
    /** Embedding requests (G5, G4 /v1/embeddings): an hourly limit. */
    embeddings: (p: Principal) =>
      check('embeddings', p, policy.embeddings[p.tier], 'RATE_LIMITED', 'Embedding request'),
  };
}

function describeWindow(ms: number): string {
  if (ms === HOUR) return 'hour';
  if (ms === MINUTE) return 'minute';
  return `${Math.round(ms / 1000)} s`;
}
