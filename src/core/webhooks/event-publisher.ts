import { createHash } from 'node:crypto';
import type { Principal } from '../api-keys/api-key.types.ts';
import { canonicalJson } from '../canonical-json.ts';
import { isoTimestamp, type Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import type { EventRepository } from '../events/event.repository.ts';
import { GENERIC_EVENT_TYPES, type NewEvent } from '../events/event.types.ts';
import type { IdempotencyRepository } from '../events/idempotency.repository.ts';
import { newEventId } from '../events/memory-events.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency/idempotent-request.service.ts';
import { checkJsonDepth } from '../json-limits.ts';

/**
 * Producers publish G10 events (`POST /v1/events`). Mnemo relays `data` as given (any JSON object up to 64 KiB and
 * MAX_JSON_DEPTH levels deep): it checks the type, not the payload's shape. The event belongs to the caller's tenant
 * and mode (no workspace) and is queued, in the same transaction, for each of their active G10 webhooks that
 * subscribe to its type.
 *
 * With an `Idempotency-Key` the first answer is kept for 24 hours (per tenant and mode): a repeat with the same
 * request gets that answer again and publishes nothing; a repeat with a different request is a CONFLICT.
 */
export const MAX_EVENT_DATA_BYTES = 64 * 1024;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Expired keys are swept at most this often, by whichever publish comes along. */
export const IDEMPOTENCY_PRUNE_EVERY_MS = 10 * 60 * 1000;

export interface PublishInput {
  type: string;
  data: Record<string, unknown>;
}

export interface PublishedEvent {
  id: string;
  type: string;
  createdAt: Date;
  data: Record<string, unknown>;
}

export interface PublishOutcome {
  event: PublishedEvent;
  /** True when this answers a repeated `Idempotency-Key`: nothing new was published. */
  replayed: boolean;
}

export interface EventPublisherDeps {
  events: Pick<EventRepository, 'append'>;
  idempotency: IdempotencyRepository;
  clock: Clock;
}

export type EventPublisher = ReturnType<typeof createEventPublisher>;

export const requestDigest = (input: PublishInput): string =>
  createHash('sha256').update(canonicalJson({ type: input.type, data: input.data })).digest('hex');

const toStored = (e: PublishedEvent): string =>
  JSON.stringify({ id: e.id, type: e.type, created_at: isoTimestamp(e.createdAt), data: e.data });

function fromStored(text: string): PublishedEvent {
  const o = JSON.parse(text) as { id: string; type: string; created_at: string; data: Record<string, unknown> };
  return { id: o.id, type: o.type, createdAt: new Date(o.created_at), data: o.data };
}

export function createEventPublisher(deps: EventPublisherDeps) {
  const { events, idempotency, clock } = deps;
  let lastPrune = -Infinity;

  function check(input: PublishInput, key: string | undefined): void {
    const problems: FieldProblem[] = [];
    if (!(GENERIC_EVENT_TYPES as readonly string[]).includes(input.type)) {
      problems.push({ field: 'type', reason: 'not_found', message: `unknown event type; one of: ${GENERIC_EVENT_TYPES.join(', ')}` });
    }
    if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      problems.push({ field: 'Idempotency-Key', reason: 'invalid_format', message: 'must be 1-255 printable ASCII characters' });
    }
    // Before anything serializes it (size, request digest): deeply nested JSON would overflow the stack.
    checkJsonDepth(input.data, problems, 'data');
    if (problems.length > 0) throw validationError(problems);
    const size = Buffer.byteLength(JSON.stringify(input.data), 'utf8');
    if (size > MAX_EVENT_DATA_BYTES) {
      throw new DomainError('CONTENT_TOO_LARGE', `data is ${size} bytes as JSON; at most ${MAX_EVENT_DATA_BYTES} are allowed`, {
        fields: [{ field: 'data', reason: 'too_long', message: `must be at most ${MAX_EVENT_DATA_BYTES} bytes as JSON` }],
      });
    }
  }

  async function pruneNow(now: Date): Promise<void> {
    if (now.getTime() - lastPrune < IDEMPOTENCY_PRUNE_EVERY_MS) return;
    lastPrune = now.getTime();
    await idempotency.prune(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
  }

  return {
    async publish(principal: Principal, input: PublishInput, idempotencyKey?: string): Promise<PublishOutcome> {
      check(input, idempotencyKey);
      const now = clock.now();
      const event: NewEvent = {
        id: newEventId(),
        type: input.type,
        scope: { tenantId: principal.tenantId, mode: principal.mode, workspace: null },
        data: input.data,
        createdAt: now,
      };
      const published: PublishedEvent = { id: event.id, type: event.type, createdAt: now, data: event.data };
      if (idempotencyKey === undefined) {
        await events.append([event]);
        return { event: published, replayed: false };
      }
      const requestHash = requestDigest(input);
      const result = await idempotency.appendEventOnce(
        { tenantId: principal.tenantId, mode: principal.mode, key: idempotencyKey },
        { requestHash, response: toStored(published), at: now, notBefore: new Date(now.getTime() - IDEMPOTENCY_TTL_MS + 1) },
        [event],
      );
      await pruneNow(now);
      if (result.kind === 'appended') return { event: published, replayed: false };
      if (result.record.requestHash !== requestHash) {
        throw new DomainError('CONFLICT', 'This Idempotency-Key was already used with a different request', {
          fields: [{ field: 'Idempotency-Key', reason: 'conflict', message: 'was used within the last 24 hours for a different request body' }],
        });
      }
      return { event: fromStored(result.record.response), replayed: true };
    },
  };
}
