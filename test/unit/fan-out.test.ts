import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/events/event.types.ts';
import { fanOut, fanOutCandidates } from '../../src/core/webhooks/fan-out.ts';
import type { Webhook } from '../../src/core/webhooks/webhook.types.ts';

const at = new Date(Date.UTC(2026, 0, 1));
const hook = (id: string, over: Partial<Webhook> = {}): Webhook => ({
  id, kind: 'g9', scope: { tenantId: 't1', mode: 'live', workspace: 'default' }, url: 'http://127.0.0.1:9/', events: ['memory.created'],
  description: null, status: 'active', retryPolicy: { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 1000 },
  filters: {}, createdAt: at, updatedAt: at, lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 }, ...over,
});
const event = (over: Partial<StoredEvent> = {}): StoredEvent => ({
  seq: 42, id: 'evt_1', type: 'memory.created', scope: { tenantId: 't1', mode: 'live', workspace: 'default' },
  data: { tags: ['ops'], metadata: {}, memory_type: 'context' }, createdAt: at, ...over,
});

describe('outbox fan-out (the core decides, adapters store the rows)', () => {
  it('asks for the webhooks of the event\'s tenant and mode, or all of them for a system event', () => {
    expect(fanOutCandidates(event())).toEqual({ kind: 'scope', tenantId: 't1', mode: 'live' });
    expect(fanOutCandidates(event({ scope: { tenantId: null, mode: null, workspace: null } }))).toEqual({ kind: 'all' });
  });

  it('makes one pending delivery per candidate that wants the event, due at the event\'s time', () => {
    const candidates = [
      hook('wanted', { filters: { tags: ['ops'] } }),
      hook('filtered out', { filters: { tags: ['misc'] } }),
      hook('other type', { events: ['memory.deleted'] }),
      hook('disabled', { status: 'disabled' }),
      // A candidate read too widely (another tenant) is still refused: the adapter's query only narrows.
      hook('other tenant', { scope: { tenantId: 't2', mode: 'live', workspace: 'default' } }),
      hook('other workspace', { scope: { tenantId: 't1', mode: 'live', workspace: 'w2' } }),
    ];
    const deliveries = fanOut(event(), candidates);
    expect(deliveries.map((d) => d.webhookId)).toEqual(['wanted']);
    expect(deliveries[0]).toMatchObject({ eventSeq: 42, dueAt: at, createdAt: at });
    expect(deliveries[0]!.id).toMatch(/^dlv_[0-9A-Za-z]{24}$/);
    expect(new Set(fanOut(event(), [hook('a'), hook('b')]).map((d) => d.id)).size).toBe(2);
  });
});
