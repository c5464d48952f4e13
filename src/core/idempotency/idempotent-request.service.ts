import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.ts';
import type { Clock } from '../clock.ts';
import { DomainError, validationError } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import type { KeyMode } from '../scope.ts';
import { open, seal, type Keyring } from '../secrets/envelope.ts';
import { idempotentRecordContext, type IdempotentRequestRef, type IdempotentRequestRepository } from './idempotent-request.repository.ts';

/**
 * `Idempotency-Key` for the writes of a surface (G11: every POST and PUT), whatever the write is. The first request
 * with a key reserves it, runs, and leaves its answer; a repeat of the same request within 24 hours gets that answer
 * again without running; a different request with the key is refused (IDEMPOTENCY_KEY_REUSED), and so is a repeat
 * while the first is still running (CONFLICT). As the IETF Idempotency-Key draft and Stripe do, with these choices:
 *
 * - Keys belong to the API key that sent them (within its tenant and mode), not to the whole tenant as Stripe's
 *   (per account) and G10's (per tenant and mode) do: an answer may hold a secret's value or a new API key, and the
 *   same key from another API key of the tenant, which may hold fewer scopes, must not be handed it.
 * - Only successful (2xx) answers are kept. An error answer of these writes means nothing was written, so its key is
 *   freed and a retry runs again (Stripe keeps 4xx answers too; but a 404 or 403 kept for 24 hours would outlive the
 *   state that caused it, such as a scope granted since).
 * - An answer over IDEMPOTENT_ANSWER_MAX_BYTES is not kept either (only an audit-log export can be that large, and
 *   it writes nothing): its key is freed.
 * - The kept answer is sealed with the master key (envelope.ts), as everything of a request is: it may hold a
 *   secret's value or an API key. The request's fingerprint is sealed inside it, not stored beside it, since a bare
 *   digest of a body holding a short secret would let a reader of the database test guesses.
 */

/** A kept answer is replayed this long after the first request. */
export const IDEMPOTENT_REQUEST_TTL_MS = 24 * 60 * 60 * 1000;
/** A reservation holds its key this long; a request that died running (a crash) frees its key after it. */
export const IDEMPOTENT_REQUEST_LOCK_MS = 60 * 1000;
/** Answers larger than this (bytes of UTF-8 body) are not kept. */
export const IDEMPOTENT_ANSWER_MAX_BYTES = 1024 * 1024;
/** Expired keys are swept at most this often, by whichever request with a key comes along. */
export const IDEMPOTENT_REQUEST_PRUNE_EVERY_MS = 10 * 60 * 1000;
/** 1-255 printable ASCII characters (G10's producer events take the same). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/** Who sends the key: the API key record, and its tenant and mode. */
export interface IdempotentCaller {
  tenantId: string;
  mode: KeyMode;
  apiKeyId: string;
}

/** What makes two requests the same one: a request with the same key must match its first request in all of these. */
export interface RequestDescription {
  method: string;
  /** The route as declared (`/v1/security/secrets/:name`). */
  route: string;
  params: unknown;
  query: unknown;
  /** The parsed body: its key order does not matter. */
  body: unknown;
  /** `X-Region`, which a write records. */
  region: string | null;
}

/** SHA-256 (hex) of the request's canonical form. */
export const requestFingerprint = (r: RequestDescription): string => createHash('sha256')
  .update(canonicalJson(['mnemo-idempotent-request-v1', r.method, r.route, r.params ?? null, r.query ?? null, r.body ?? null, r.region]))
  .digest('hex');

/** An answer as kept and replayed: status, the headers that describe the body, and the body as sent. */
export interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A reservation held by a running request: handed back to `finish` or `abandon`. */
export interface IdempotencyTicket {
  readonly ref: IdempotentRequestRef;
  readonly reservation: string;
  readonly fingerprint: string;
}

export type BeginOutcome = { kind: 'run'; ticket: IdempotencyTicket } | { kind: 'replay'; answer: RecordedAnswer };

/** What is sealed: the fingerprint of the first request and its answer. */
interface SealedRecord extends RecordedAnswer {
  fingerprint: string;
}

export type IdempotentRequestService = ReturnType<typeof createIdempotentRequestService>;

export function createIdempotentRequestService(deps: { requests: IdempotentRequestRepository; keyring: () => Keyring; clock: Clock }) {
  const { requests, clock } = deps;
  let lastPrune = -Infinity;

  async function pruneNow(now: Date): Promise<void> {
    if (now.getTime() - lastPrune < IDEMPOTENT_REQUEST_PRUNE_EVERY_MS) return;
    lastPrune = now.getTime();
    await requests.prune(new Date(now.getTime() - IDEMPOTENT_REQUEST_TTL_MS));
  }

  /**
   * Before the request runs: reserves `key` for it (`run`: run it, then `finish` or `abandon`), or answers with the
   * kept answer (`replay`: do not run it). Throws VALIDATION_FAILED for a malformed key, CONFLICT while another request
   * with the key runs, IDEMPOTENCY_KEY_REUSED when the key was used for a different request.
   */
  async function begin(caller: IdempotentCaller, key: string, fingerprint: string): Promise<BeginOutcome> {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw validationError([{ field: 'Idempotency-Key', reason: 'invalid_format', message: 'must be 1-255 printable ASCII characters' }]);
    }
    const now = clock.now();
    await pruneNow(now);
    const ref: IdempotentRequestRef = { tenantId: caller.tenantId, mode: caller.mode, apiKeyId: caller.apiKeyId, key };
    const reservation = prefixedId('idr', 24);
    const outcome = await requests.reserve(ref, {
      reservation, at: now,
      lockedUntil: new Date(now.getTime() + IDEMPOTENT_REQUEST_LOCK_MS),
      notBefore: new Date(now.getTime() - IDEMPOTENT_REQUEST_TTL_MS + 1),
    });
    if (outcome.kind === 'reserved') return { kind: 'run', ticket: { ref, reservation, fingerprint } };
    if (outcome.kind === 'in_progress') {
      throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is in progress; retry once it has been answered', { field: 'Idempotency-Key' });
    }
    const record = JSON.parse(open(deps.keyring(), idempotentRecordContext(ref, outcome.reservation), outcome.sealed)) as SealedRecord;
    if (record.fingerprint !== fingerprint) {
      throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request', { field: 'Idempotency-Key' });
    }
    return { kind: 'replay', answer: { status: record.status, headers: record.headers, body: record.body } };
  }

  /**
   * After the request ran: keeps its answer for replays when it is a success and not too large (true), else frees
   * the key (false). False too when the reservation was taken over meanwhile (it outlived its lock).
   */
  async function finish(ticket: IdempotencyTicket, answer: RecordedAnswer): Promise<boolean> {
    const kept = answer.status >= 200 && answer.status < 300 && Buffer.byteLength(answer.body, 'utf8') <= IDEMPOTENT_ANSWER_MAX_BYTES;
    if (!kept) {
      await requests.release(ticket.ref, ticket.reservation);
      return false;
    }
    const record: SealedRecord = { fingerprint: ticket.fingerprint, status: answer.status, headers: answer.headers, body: answer.body };
    const sealed = seal(deps.keyring(), idempotentRecordContext(ticket.ref, ticket.reservation), JSON.stringify(record));
    return requests.complete(ticket.ref, ticket.reservation, sealed);
  }

  /** Frees the key of a request that gave no answer to keep (it failed before answering, or its answer cannot be kept). */
  async function abandon(ticket: IdempotencyTicket): Promise<void> {
    await requests.release(ticket.ref, ticket.reservation);
  }

  return { begin, finish, abandon };
}
