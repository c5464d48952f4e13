/**
 * Sends one delivery attempt over the network. The adapter (adapters/webhooks/http.sender.ts) vets the destination
 * address, applies the timeout and caps how much of the answer it reads. It never throws: every way an attempt can
 * go wrong is an outcome, so the worker can schedule the retry.
 */
export interface OutgoingDelivery {
  url: string;
  headers: Record<string, string>;
  /** The exact bytes that were signed. */
  body: string;
  /** Aborts the attempt (shutdown). */
  signal?: AbortSignal | undefined;
}

export type SendOutcome =
  /** The receiver answered (any status). `bodyExcerpt`: the start of its answer, for last_error; empty for 2xx. */
  | { status: number; bodyExcerpt: string; durationMs: number }
  /** No answer: refused address, DNS failure, connection error, timeout, abort. */
  | { status: null; error: string; durationMs: number; aborted?: boolean };

export interface WebhookSender {
  send(delivery: OutgoingDelivery): Promise<SendOutcome>;
}
