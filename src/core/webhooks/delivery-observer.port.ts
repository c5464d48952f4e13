/**
 * What became of one delivery the worker took: `delivered` (a 2xx), `failed_retry` (failed, another attempt is
 * scheduled), `failed_final` (failed, no attempt left), `postponed` (not attempted: the webhook's rate limit, or a
 * signing secret this node cannot open; it keeps its attempt count).
 */
export type DeliveryOutcome = 'delivered' | 'failed_retry' | 'failed_final' | 'postponed';

/** Told every outcome the delivery worker records, for operators' counters (`/metrics`); must not throw. */
export interface DeliveryObserver {
  outcome(outcome: DeliveryOutcome): void;
}
