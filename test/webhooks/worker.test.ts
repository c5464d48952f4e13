import { afterEach, describe, expect, it } from 'vitest';
import { createDeliveryWorker } from '../../src/core/webhooks/delivery-worker.ts';
import { createRig, g10Hook, insertHook, startReceiver, testKeyring, transferEvent, waitFor, type Receiver, type Rig } from './support.ts';

const rigDeps = (rig: Rig) => ({ webhooks: rig.storage.webhooks, events: rig.storage.events, sender: rig.sender, limiter: rig.limiter, clock: rig.clock });

describe('delivery worker lifecycle', () => {
  let rig: Rig;
  let receiver: Receiver;
  afterEach(async () => {
    await rig.close();
    await receiver.close();
  });

  it('start() delivers new events as they commit, and retries when the clock says so', async () => {
    receiver = await startReceiver();
    rig = createRig({ worker: { pollMs: 20 } });
    await rig.insert(g10Hook(receiver.url));
    const logs: string[] = [];
    rig.worker.start({ logger: { debug: (_o, m) => logs.push(m), info: (_o, m) => logs.push(m), warn: (_o, m) => logs.push(m) } });

    await rig.storage.events.append([transferEvent(rig.clock)]);
    await waitFor(() => receiver.received.length === 1);

    let calls = 0;
    receiver.respondWith((_q, res) => { res.statusCode = ++calls === 1 ? 500 : 200; res.end(); });
    await rig.storage.events.append([transferEvent(rig.clock)]);
    await waitFor(() => receiver.received.length === 2);
    // The receiver sees the request before the worker has stored the 500: wait for the stored failure, or the clock
    // could advance first and the retry be scheduled a minute after the advanced time (never reached).
    await waitFor(() => rig.deliveryRows().some((r) => r.last_status === 500 && r.state === 'pending'));
    // The timer is only a wake-up: nothing is due until the (manual) clock reaches the retry time. A tick run now
    // finds nothing to send; once the clock reaches it, the timer's tick sends the retry (the positive control).
    expect(await rig.worker.tick()).toBe(0);
    expect(receiver.received).toHaveLength(2);
    rig.clock.advance(60_000);

    await waitFor(() => receiver.received.length === 3);
    await waitFor(async () => (await rig.storage.webhooks.pendingCount()) === 0);
    expect(logs).toContain('webhook delivered');
    expect(logs).toContain('webhook delivery failed; will retry');
  });

  it('stop() waits for in-flight attempts; a stuck one is abandoned to its lease and redelivered later (at-least-once)', async () => {
    let hang = true;
    receiver = await startReceiver((_q, res) => { if (!hang) res.end(); });
    rig = createRig({ worker: { stopGraceMs: 100, leaseMs: 30_000 }, sender: { timeoutMs: 10_000 } });
    const hook = g10Hook(receiver.url);
    await rig.insert(hook);
    rig.worker.start();
    const [event] = await rig.storage.events.append([transferEvent(rig.clock)]);
    await waitFor(() => receiver.received.length === 1);

    const started = Date.now();
    await rig.worker.stop();
    expect(Date.now() - started).toBeLessThan(2000);
    // Not counted as an attempt: the claim simply expires.
    expect(rig.deliveryRows()).toMatchObject([{ state: 'pending', attempts: 0 }]);

    // Another worker (a restarted process) picks it up once the lease has expired.
    hang = false;
    const next = createDeliveryWorker({ webhooks: rig.storage.webhooks, events: rig.storage.events, sender: rig.sender, limiter: rig.limiter, clock: rig.clock, keyring: () => rig.keyring });
    expect(await next.tick()).toBe(0);
    rig.clock.advance(30_000);
    expect(await next.tick()).toBe(1);
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id)).toEqual([event!.id, event!.id]);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'succeeded', attempts: 1 }]);
  });

  it('sends nothing, and counts no attempt, for a secret its keyring does not open; a worker whose keyring does sends it', async () => {
    receiver = await startReceiver();
    rig = createRig({ worker: { leaseMs: 30_000 } });
    // Sealed under a master key this worker lacks (a node started without the key the store was rotated to).
    const elsewhere = testKeyring();
    const hook = g10Hook(receiver.url);
    await insertHook(rig.storage.webhooks, elsewhere, hook);
    await rig.storage.events.append([transferEvent(rig.clock)]);
    const warnings: { obj: object; msg: string }[] = [];
    const logger = { debug() {}, info() {}, warn: (obj: object, msg: string) => warnings.push({ obj, msg }) };
    const blind = createDeliveryWorker({ ...rigDeps(rig), keyring: () => rig.keyring, logger });
    expect(await blind.tick()).toBe(0);
    expect(receiver.received).toHaveLength(0);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'pending', attempts: 0 }]);
    expect(warnings).toEqual([{ obj: expect.objectContaining({ webhook: hook.id, err: expect.stringMatching(/is not in the keyring/) }), msg: expect.stringMatching(/does not open/) }]);
    expect(JSON.stringify(warnings)).not.toContain(hook.secret);

    rig.clock.advance(30_000);
    const sighted = createDeliveryWorker({ ...rigDeps(rig), keyring: () => elsewhere });
    expect(await sighted.tick()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'succeeded', attempts: 1 }]);
  });

  it('stop() before start() and twice is harmless', async () => {
    receiver = await startReceiver();
    rig = createRig();
    await rig.worker.stop();
    rig.worker.start();
    await rig.worker.stop();
    await rig.worker.stop();
  });
});

describe('delivery worker concurrency', () => {
  it('sends more than 10 attempts at once (up to its concurrency, 16) without Node warning of a listener leak on its shutdown signal', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => { warnings.push(`${w.name}: ${w.message}`); };
    process.on('warning', onWarning);
    // Holds every request until 12 are open at once (three webhooks: at most 5 attempts in flight per webhook).
    const held: (() => void)[] = [];
    const receiver = await startReceiver((_q, res) => new Promise<void>((resolve) => {
      held.push(() => { res.end(); resolve(); });
      if (held.length === 12) for (const release of held) release();
    }));
    const rig = createRig({ worker: { pollMs: 20 } });
    try {
      for (let h = 0; h < 3; h++) await rig.insert(g10Hook(receiver.url));
      await rig.storage.events.append(Array.from({ length: 4 }, () => transferEvent(rig.clock)));
      rig.worker.start();
      await waitFor(() => receiver.received.length === 12);
      await waitFor(async () => (await rig.storage.webhooks.pendingCount()) === 0);
      // A warning is emitted on the next tick after the listener that crossed the limit.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await rig.close();
      await receiver.close();
    }
  });
});

describe('delivery worker observer (the /metrics outcomes)', () => {
  it('tells each outcome: delivered, postponed by the rate limit, failed_retry, then failed_final', async () => {
    const receiver = await startReceiver();
    const rig = createRig();
    const outcomes: string[] = [];
    const worker = createDeliveryWorker({
      ...rigDeps(rig), keyring: () => rig.keyring, observer: { outcome: (o) => outcomes.push(o) },
      options: { rateLimit: { limit: 1, windowMs: 60_000 } },
    });
    try {
      await rig.insert(g10Hook(receiver.url));
      await rig.storage.events.append([transferEvent(rig.clock), transferEvent(rig.clock)]);
      await worker.tick();
      expect(outcomes.sort()).toEqual(['delivered', 'postponed']);

      // The postponed one fails from now on: retried on the G10 schedule, then given up after its last attempt.
      receiver.respondWith((_q, res) => { res.statusCode = 500; res.end(); });
      outcomes.length = 0;
      for (let i = 0; i < 10 && !outcomes.includes('failed_final'); i++) {
        rig.clock.advance(25 * 3_600_000);
        await worker.tick();
      }
      expect(outcomes.filter((o) => o === 'failed_retry').length).toBeGreaterThanOrEqual(1);
      expect(outcomes.at(-1)).toBe('failed_final');
      expect(outcomes.filter((o) => o === 'failed_final')).toHaveLength(1);
      expect(await rig.storage.webhooks.pendingCount()).toBe(0);
    } finally {
      await worker.stop();
      await rig.close();
      await receiver.close();
    }
  });
});
