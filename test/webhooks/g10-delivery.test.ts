import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyMnemoSignature, WebhookVerificationError } from '../../src/client/webhook-receiver.ts';
import { createRig, g10Hook, startReceiver, transferEvent, type Receiver, type Rig } from './support.ts';

describe('G10 deliveries (generic events)', () => {
  let rig: Rig;
  let receiver: Receiver;
  // Offline: constructing the client and verifying signatures make no network call.
  const stripe = new Stripe('sk_test_x');

  beforeEach(async () => {
    rig = createRig({ start: Math.floor(Date.now() / 1000) * 1000 });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await rig.close();
    await receiver.close();
  });

  it('posts {id, type, created_at, data} signed t=…,v1=… exactly as Stripe verifies it', async () => {
    const hook = g10Hook(`${receiver.url}/in`);
    await rig.insert(hook);
    const [event] = await rig.storage.events.append([transferEvent(rig.clock)]);

    expect(await rig.worker.tick()).toBe(1);
    const r = receiver.received[0]!;
    const body = JSON.parse(r.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(body).toEqual({ id: event!.id, type: 'transfer.completed', created_at: event!.createdAt.toISOString(), data: event!.data });

    const t = Math.floor(rig.clock.now().getTime() / 1000);
    const header = r.headers['x-service-signature']!;
    expect(header).toBe(`t=${t},v1=${createHmac('sha256', hook.secret).update(`${t}.${r.body}`).digest('hex')}`);
    expect(r.headers).toMatchObject({
      'content-type': 'application/json', 'user-agent': 'Mnemo-Webhooks/1.0', 'x-service-event': 'transfer.completed',
      'x-service-delivery': expect.stringMatching(/^dlv_/),
    });
    expect(r.headers['webhook-signature']).toBeUndefined();

    // Stripe's verifier (an independent implementation of exactly this scheme) accepts it…
    const verified = stripe.webhooks.constructEvent(r.body, header, hook.secret, 300, undefined, rig.clock.now().getTime());
    expect(verified).toMatchObject({ id: event!.id, type: 'transfer.completed' });
    expect(() => stripe.webhooks.constructEvent(r.body.replace('NGN', 'USD'), header, hook.secret)).toThrow();

    // …and so does the receiver helper, which refuses a tampered body or a timestamp 301 s off either way.
    const now = rig.clock.now();
    expect(verifyMnemoSignature({ payload: r.body, header, secret: hook.secret, now })).toBe(true);
    expect(verifyMnemoSignature({ payload: Buffer.from(r.body), header, secret: hook.secret, now: new Date(now.getTime() + 300_000) })).toBe(true);
    expect(() => verifyMnemoSignature({ payload: r.body, header, secret: hook.secret, now: new Date(now.getTime() + 301_000) }))
      .toThrow(WebhookVerificationError);
    expect(() => verifyMnemoSignature({ payload: r.body, header, secret: hook.secret, now: new Date(now.getTime() - 301_000) }))
      .toThrow(/timestamp/);
    expect(() => verifyMnemoSignature({ payload: r.body.replace('NGN', 'USD'), header, secret: hook.secret, now })).toThrow(/signature/);
    expect(() => verifyMnemoSignature({ payload: r.body, header, secret: 'whsec_other', now })).toThrow(/signature/);
  });

  it('retries after 1 min, 5 min, 30 min, 2 h, 8 h, 24 h, then marks the webhook failed; PATCH back to active resumes', async () => {
    receiver.respondWith((_q, res) => { res.statusCode = 500; res.end(); });
    const hook = g10Hook(receiver.url);
    await rig.insert(hook);
    await rig.storage.events.append([transferEvent(rig.clock)]);

    expect(await rig.worker.tick()).toBe(1);
    const MIN = 60_000;
    for (const delay of [1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 480 * MIN, 1440 * MIN]) {
      rig.clock.advance(delay - 1000);
      expect(await rig.worker.tick()).toBe(0);
      rig.clock.advance(1000);
      expect(await rig.worker.tick()).toBe(1);
    }
    expect(receiver.received).toHaveLength(7);
    expect(new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id)).size).toBe(1);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'failed', attempts: 7, last_status: 500 }]);
    expect(await rig.storage.webhooks.findById(hook.scope, 'g10', hook.id)).toMatchObject({
      status: 'failed', stats: { totalAttempts: 7, failedDeliveries: 1 },
    });

    // Failed: a new event produces no delivery at all.
    await rig.storage.events.append([transferEvent(rig.clock)]);
    expect(await rig.storage.webhooks.pendingCount()).toBe(0);
    rig.clock.advance(10 * MIN);
    expect(await rig.worker.tick()).toBe(0);

    // PATCHed back to active: new events are delivered again.
    receiver.respondWith((_q, res) => { res.end(); });
    await rig.storage.webhooks.update(hook.scope, 'g10', hook.id, { status: 'active' }, rig.clock.now());
    const [fresh] = await rig.storage.events.append([transferEvent(rig.clock)]);
    expect(await rig.worker.tick()).toBe(1);
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ id: fresh!.id });
  });

  it('a 410 Gone fails the webhook at once, without retries', async () => {
    receiver.respondWith((_q, res) => { res.statusCode = 410; res.end('unsubscribed'); });
    const hook = g10Hook(receiver.url);
    await rig.insert(hook);
    await rig.storage.events.append([transferEvent(rig.clock)]);
    expect(await rig.worker.tick()).toBe(1);
    rig.clock.advance(86_400_000);
    expect(await rig.worker.tick()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'failed', attempts: 1, last_status: 410 }]);
    expect(rig.deliveryRows()[0]!.last_error).toMatch(/^HTTP 410 Gone.*: unsubscribed$/);
    expect(await rig.storage.webhooks.findById(hook.scope, 'g10', hook.id)).toMatchObject({ status: 'failed' });
  });
});
