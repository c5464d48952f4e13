import { defaultMaxListeners, setMaxListeners } from 'node:events';
import type { Clock } from '../clock.ts';
import type { EventRepository } from '../events/event.repository.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.port.ts';
import { SealedValueError, type Keyring } from '../secrets/envelope.ts';
import { buildDeliveryRequest } from './delivery-payload.ts';
import { attemptResult } from './delivery-schedule.ts';
import type { WebhookRepository } from './webhook.repository.ts';
import { openWebhookSecret } from './webhook-secret.ts';
import type { WebhookSender } from './webhook-sender.port.ts';
import type { DeliveryObserver } from './delivery-observer.port.ts';
import type { ClaimedDelivery } from './webhook.types.ts';

/** pino's calling convention, so the server's logger fits; the worker never logs a secret or a URL. */
export interface DeliveryLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface DeliveryWorkerOptions {
  /** Deliveries in flight at once, over all webhooks. */
  concurrency?: number;
  /** Spec: at most 5 concurrent deliveries per webhook. */
  perWebhook?: number;
  /** How long a claim is exclusive. Must exceed the sender's timeout; a crashed worker's claims come back after it. */
  leaseMs?: number;
  /** Spec: at most 1000 events per minute per webhook; over it, deliveries wait for the next window. */
  rateLimit?: { limit: number; windowMs: number };
  /** How often `start()` looks for due deliveries (retries) besides being woken by new events. */
  pollMs?: number;
  /** How long `stop()` waits for in-flight attempts before aborting them (their claims then expire: redelivered). */
  stopGraceMs?: number;
}

export interface DeliveryWorker {
  /** Claims what is due now, sends it concurrently and waits; returns how many attempts were made. */
  tick(): Promise<number>;
  /** Delivers continuously: woken by new events, by each finished attempt and by a timer. */
  start(options?: { logger?: DeliveryLogger }): void;
  /** Stops claiming and waits (bounded) for in-flight attempts. */
  stop(): Promise<void>;
}

/**
 * The lease a node takes on each delivery it claims, from the sender's timeout: the claim must outlast the attempt
 * (the rate-limit check, the send, recording the outcome) with room to spare, or another node would send it again.
 * It is also how long a crashed node's claims wait before another node sends them (17 s with the 5 s default).
 */
export const webhookLeaseMs = (senderTimeoutMs: number): number => 3 * senderTimeoutMs + 2_000;

const silent: DeliveryLogger = { debug() {}, info() {}, warn() {} };

/**
 * The delivery engine over the outbox. Correctness lives in storage and the injected clock: claims are leases, so
 * several workers (or nodes) never send the same delivery at once, and a crash only delays it (at-least-once; the
 * event id is the receiver's duplicate key). The timer is just a wake-up.
 */
export function createDeliveryWorker(deps: {
  webhooks: Pick<WebhookRepository, 'claimDue' | 'complete' | 'release'>;
  events: Pick<EventRepository, 'onAppended'>;
  sender: WebhookSender;
  limiter: RateLimiter;
  clock: Clock;
  /** Opens each webhook's sealed signing secret, just before the attempt that signs with it. */
  keyring: () => Keyring;
  logger?: DeliveryLogger;
  /** Told each outcome (for `/metrics`); none by default. */
  observer?: DeliveryObserver;
  options?: DeliveryWorkerOptions;
}): DeliveryWorker {
  const { webhooks, events, sender, limiter, clock } = deps;
  const o = deps.options ?? {};
  const concurrency = o.concurrency ?? 16;
  const perWebhook = o.perWebhook ?? 5;
  const leaseMs = o.leaseMs ?? 30_000;
  const rate = o.rateLimit ?? { limit: 1000, windowMs: 60_000 };
  const pollMs = o.pollMs ?? 250;
  const stopGraceMs = o.stopGraceMs ?? 5_000;
  let log = deps.logger ?? silent;
  const observe = deps.observer ?? { outcome() {} };

  const inFlight = new Set<Promise<boolean>>();
  let shutdown = shutdownController(concurrency);
  let running = false;
  let unsubscribe: (() => void) | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;

  /** One attempt; true when it was sent (not put back by the rate limit). Never rejects. */
  async function deliver(claim: ClaimedDelivery): Promise<boolean> {
    const { delivery, webhook, event } = claim;
    const ids = { delivery: delivery.id, webhook: webhook.id, event: event.id, type: event.type };
    try {
      let secret: string;
      try {
        secret = openWebhookSecret(deps.keyring(), webhook, claim.secret);
      } catch (err) {
        if (!(err instanceof SealedValueError)) throw err;
        // Not an attempt, and nothing is sent unsigned: the claim expires and a node whose keyring opens it (after
        // the master key is fixed) sends it. The message names the key problem, never the secret.
        log.warn({ ...ids, err: err.message }, 'webhook secret does not open with this node\'s master keys; delivery left for later');
        observe.outcome('postponed');
        return false;
      }
      const decision = await limiter.hit(`webhook:${webhook.id}`, rate.limit, rate.windowMs);
      if (!decision.allowed) {
        // Not an attempt: the delivery waits for the next window and keeps its attempt count.
        await webhooks.release(delivery.id, decision.resetAt);
        log.debug({ ...ids, retry_at: decision.resetAt }, 'webhook rate limit reached; delivery postponed');
        observe.outcome('postponed');
        return false;
      }
      const attempt = delivery.attempts + 1;
      const request = buildDeliveryRequest(claim, secret, attempt, clock.now());
      // Before sending, so an operator (or a test) can tell which node made an attempt the receiver saw.
      log.debug({ ...ids, attempt_id: request.attemptId, attempt }, 'sending webhook');
      const outcome = await sender.send({ url: webhook.url, headers: request.headers, body: request.body, signal: shutdown.signal });
      if (outcome.status === null && outcome.aborted) {
        // Shutting down: leave the claim to expire, so the attempt is made again later rather than counted.
        log.info({ ...ids, attempt_id: request.attemptId }, 'webhook delivery interrupted by shutdown');
        return true;
      }
      const result = attemptResult(webhook, attempt, outcome, clock.now());
      await webhooks.complete(delivery.id, result);
      const fields = { ...ids, attempt_id: request.attemptId, attempt, status: outcome.status, duration_ms: outcome.durationMs };
      observe.outcome(result.ok ? 'delivered' : result.retryAt ? 'failed_retry' : 'failed_final');
      if (result.ok) log.info(fields, 'webhook delivered');
      else log.info({ ...fields, error: result.error.slice(0, 300), retry_at: result.retryAt, webhook_failed: result.failWebhook },
        result.retryAt ? 'webhook delivery failed; will retry' : 'webhook delivery failed; giving up');
      return true;
    } catch (err) {
      // Storage trouble: the claim expires and the delivery is tried again.
      log.warn({ ...ids, err: String(err) }, 'webhook delivery could not be recorded');
      return false;
    }
  }

  async function claimAndSend(limit: number): Promise<Promise<boolean>[]> {
    const claims = await webhooks.claimDue(clock.now(), limit, perWebhook, leaseMs);
    return claims.map((claim) => {
      const p = deliver(claim);
      inFlight.add(p);
      void p.finally(() => {
        inFlight.delete(p);
        if (running) void pump();
      });
      return p;
    });
  }

  // pump(): fill free slots while work is due. A wake-up during a pump makes it look once more, so no event is missed.
  let pumping: Promise<void> | null = null;
  let again = false;
  function pump(): Promise<void> {
    if (!running) return Promise.resolve();
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = fill().finally(() => {
      pumping = null;
      // A wake-up that arrived after the last look: look again.
      if (again) void pump();
    });
    return pumping;
  }
  async function fill(): Promise<void> {
    try {
      do {
        again = false;
        while (running) {
          const free = concurrency - inFlight.size;
          if (free <= 0) break;
          const started = await claimAndSend(free);
          if (started.length < free) break;
        }
      } while (again && running);
    } catch (err) {
      log.warn({ err: String(err) }, 'webhook deliveries could not be claimed');
    }
  }

  return {
    async tick() {
      const started = await claimAndSend(concurrency);
      const sent = await Promise.all(started);
      return sent.filter(Boolean).length;
    },

    start(options = {}) {
      if (running) return;
      if (options.logger) log = options.logger;
      running = true;
      shutdown = shutdownController(concurrency);
      unsubscribe = events.onAppended(() => void pump());
      timer = setInterval(() => void pump(), pollMs);
      timer.unref?.();
      void pump();
    },

    async stop() {
      running = false;
      unsubscribe?.();
      unsubscribe = null;
      if (timer) clearInterval(timer);
      timer = null;
      // A claim under way still starts its attempts: wait for it, so they are counted below.
      await pumping;
      if (inFlight.size === 0) return;
      let graceTimer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => { graceTimer = setTimeout(resolve, stopGraceMs); });
      await Promise.race([Promise.allSettled([...inFlight]), grace]);
      clearTimeout(graceTimer);
      shutdown.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * What aborts the attempts in flight at stop(). Each attempt listens to it until it ends, so up to `concurrency` listen
 * at once: a limit above that keeps Node from warning of a listener leak (its default is 10, the worker's 16).
 */
function shutdownController(concurrency: number): AbortController {
  const controller = new AbortController();
  setMaxListeners(Math.max(concurrency, defaultMaxListeners), controller.signal);
  return controller;
}
