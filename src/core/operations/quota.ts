import type { Principal } from '../api-keys/api-key.types.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import { OPERATIONS, type OperationName, type Quota } from './catalog.ts';

/** The limit that counts each quota (core/rate-limit/tier-limits.ts). */
const QUOTA_LIMIT = {
  'memory-writes': 'memoryWrite', embeddings: 'embeddings', 'webhook-creations': 'webhookCreate', batches: 'batch',
} as const satisfies Record<Quota, keyof LimitsService>;

/** The quota operation N charges, from the catalogue (never when it charges none). */
type QuotaOf<N extends OperationName> = (typeof OPERATIONS)[N] extends { quota: infer Q extends Quota } ? Q : never;

/** What charging operation N needs: the limit of its quota, and nothing for an operation without one. */
export type QuotaLimits<N extends OperationName> = Pick<LimitsService, (typeof QUOTA_LIMIT)[QuotaOf<N>]>;

/**
 * Charges the quota the catalogue names for operation `name` (none: nothing). Services call it where the work starts,
 * after the input is checked, so the catalogue decides which limit an operation counts against and a refused request
 * charges none.
 */
export async function chargeQuota<N extends OperationName>(limits: QuotaLimits<N>, name: N, principal: Principal): Promise<void> {
  const quota = (OPERATIONS[name] as { quota?: Quota }).quota;
  if (quota === undefined) return;
  // The type ties `limits` to the operation's quota; here the catalogue picks the method at run time.
  await (limits as unknown as Pick<LimitsService, (typeof QUOTA_LIMIT)[Quota]>)[QUOTA_LIMIT[quota]](principal);
}
