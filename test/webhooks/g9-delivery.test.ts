import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import { createMemoryService } from '../../src/core/memories/memory.service.ts';
import { createLimitsService, defaultTierLimits } from '../../src/core/rate-limit/tier-limits.ts';
import { actorIn } from '../support/fixtures.ts';
import { verifyMemoryEventSignature } from '../../src/client/webhook-receiver.ts';
import { createRig, g9Hook, startReceiver, TENANT, type Receiver, type Rig } from './support.ts';

describe('G9 deliveries (memory events)', () => {
  let rig: Rig;
  let receiver: Receiver;
  const service = () => createMemoryService({
    memories: rig.storage.memories, topics: rig.storage.topics, embedder: createHashingEmbedder({ dimensions: 64 }),
    clock: rig.clock, limits: { maxContentBytes: 1 << 20, maxEmbedChars: 4000 },
    quota: createLimitsService({ limiter: createMemoryRateLimiter(rig.clock), policy: defaultTierLimits() }),
  });

  beforeEach(async () => {
    // Real time, so the independent Standard Webhooks verifier (which reads Date.now()) accepts the timestamp.
    rig = createRig({ start: Math.floor(Date.now() / 1000) * 1000 });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await rig.close();
    await receiver.close();
  });

  it('posts the spec body with exact headers, signed twice (hex HMAC and Standard Webhooks)', async () => {
    const hook = g9Hook(`${receiver.url}/hooks/mnemo?src=test`);
    await rig.insert(hook);
    const memory = await service().create(TENANT, actorIn(TENANT), { title: 'Trip', content: 'Pack the tent', tags: ['ops'], metadata: { k: 'v' } });

    expect(await rig.worker.tick()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/hooks/mnemo?src=test');

    const body = JSON.parse(r.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created', 'data', 'webhook_id', 'attempt', 'livemode']);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^evt_/), type: 'memory.created', created: memory.createdAt.toISOString(), webhook_id: hook.id,
      attempt: 1, livemode: true,
      data: { object: 'memory', id: memory.id, content: 'Pack the tent', metadata: { k: 'v' }, tags: ['ops'], created_at: memory.createdAt.toISOString() },
    });

    const unix = String(Math.floor(rig.clock.now().getTime() / 1000));
    expect(r.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Mnemo-Webhooks/1.0',
      'x-service-event': 'memory.created',
      'x-service-delivery': expect.stringMatching(/^dlv_[0-9A-Za-z]{24}$/),
      'x-service-signature': createHmac('sha256', hook.secret).update(r.body).digest('hex'),
      'webhook-id': body.id,
      'webhook-timestamp': unix,
      'content-length': String(Buffer.byteLength(r.body)),
    });
    // The independent Standard Webhooks library accepts it (key = base64 part of whsec_…), and rejects a tampered body.
    expect(new StandardWebhook(hook.secret).verify(r.body, r.headers)).toEqual(body);
    expect(() => new StandardWebhook(hook.secret).verify(r.body.replace('tent', 'tant'), r.headers)).toThrow();
    // The receiver helper agrees about the hex signature.
    expect(verifyMemoryEventSignature({ payload: r.body, signature: r.headers['x-service-signature'], secret: hook.secret })).toBe(true);
    expect(verifyMemoryEventSignature({ payload: `${r.body} `, signature: r.headers['x-service-signature'], secret: hook.secret })).toBe(false);

    expect(rig.deliveryRows()).toMatchObject([{ state: 'succeeded', attempts: 1, last_status: 200 }]);
    expect(await rig.storage.webhooks.findById(hook.scope, 'g9', hook.id)).toMatchObject({
      stats: { totalAttempts: 1, successfulDeliveries: 1, failedDeliveries: 0 }, lastDeliveryAt: rig.clock.now(),
    });
  });

  it('keys Standard Webhooks with the secret text itself when it is not whsec_<base64>', async () => {
    const hook = g9Hook(receiver.url, { secret: 'plain secret, not base64!' });
    await rig.insert(hook);
    await service().create(TENANT, actorIn(TENANT), { title: 't', content: 'c' });
    await rig.worker.tick();
    const r = receiver.received[0]!;
    expect(new StandardWebhook(Buffer.from(hook.secret, 'utf8'), { format: 'raw' }).verify(r.body, r.headers)).toMatchObject({ type: 'memory.created' });
  });

  it('says livemode false for test-mode data', async () => {
    const scope = { ...TENANT, mode: 'test' as const };
    await rig.insert(g9Hook(receiver.url, { scope }));
    await service().create(scope, actorIn(scope), { title: 't', content: 'c' });
    await rig.worker.tick();
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ livemode: false });
  });

  it('retries on the default policy: after 1 s, after 2 s, then gives up; the webhook stays active', async () => {
    receiver.respondWith((_q, res) => { res.statusCode = 500; res.end('boom'); });
    const hook = g9Hook(receiver.url);
    await rig.insert(hook);
    await service().create(TENANT, actorIn(TENANT), { title: 't', content: 'c' });

    expect(await rig.worker.tick()).toBe(1);
    rig.clock.advance(999);
    expect(await rig.worker.tick()).toBe(0);
    rig.clock.advance(1);
    expect(await rig.worker.tick()).toBe(1);
    rig.clock.advance(1999);
    expect(await rig.worker.tick()).toBe(0);
    rig.clock.advance(1);
    expect(await rig.worker.tick()).toBe(1);
    rig.clock.advance(3_600_000);
    expect(await rig.worker.tick()).toBe(0);

    const bodies = receiver.received.map((r) => JSON.parse(r.body) as { id: string; attempt: number });
    expect(bodies.map((b) => b.attempt)).toEqual([1, 2, 3]);
    // One event id on every attempt (the receiver's duplicate key); a fresh X-Service-Delivery per attempt.
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-delivery'])).size).toBe(3);

    expect(rig.deliveryRows()).toMatchObject([{ state: 'failed', attempts: 3, last_status: 500, last_error: 'HTTP 500: boom' }]);
    expect(await rig.storage.webhooks.findById(hook.scope, 'g9', hook.id)).toMatchObject({
      status: 'active', stats: { totalAttempts: 3, successfulDeliveries: 0, failedDeliveries: 1 },
    });
  });

  it('follows a custom retry_policy: delays multiply and are capped at max_delay', async () => {
    receiver.respondWith((_q, res) => { res.statusCode = 503; res.end(); });
    await rig.insert(g9Hook(receiver.url, { retryPolicy: { maxAttempts: 6, backoffMultiplier: 3, maxDelayMs: 5000 } }));
    await service().create(TENANT, actorIn(TENANT), { title: 't', content: 'c' });

    expect(await rig.worker.tick()).toBe(1);
    const gaps: number[] = [];
    let waited = 0;
    while (gaps.length < 5 && waited < 60_000) {
      rig.clock.advance(500);
      waited += 500;
      if ((await rig.worker.tick()) === 1) {
        gaps.push(waited);
        waited = 0;
      }
    }
    // 1 s, 3 s, 9 s capped to 5 s, then 5 s, 5 s; six attempts in all.
    expect(gaps).toEqual([1000, 3000, 5000, 5000, 5000]);
    rig.clock.advance(3_600_000);
    expect(await rig.worker.tick()).toBe(0);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'failed', attempts: 6 }]);
  });

  it('a success after failures completes the delivery', async () => {
    let calls = 0;
    receiver.respondWith((_q, res) => { res.statusCode = ++calls === 1 ? 502 : 204; res.end(); });
    await rig.insert(g9Hook(receiver.url));
    await service().create(TENANT, actorIn(TENANT), { title: 't', content: 'c' });
    await rig.worker.tick();
    rig.clock.advance(1000);
    await rig.worker.tick();
    expect(rig.deliveryRows()).toMatchObject([{ state: 'succeeded', attempts: 2, last_status: 204 }]);
    expect(await rig.storage.webhooks.pendingCount()).toBe(0);
  });
});
