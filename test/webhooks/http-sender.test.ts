import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpWebhookSender } from '../../src/adapters/webhooks/http.sender.ts';
import { createRig, g10Hook, g9Hook, startReceiver, transferEvent, TENANT, type Receiver, type Rig } from './support.ts';

const send = (url: string, options: Partial<Parameters<typeof createHttpWebhookSender>[0]> = {}) =>
  createHttpWebhookSender({ allowCidrs: ['127.0.0.0/8'], ...options }).send({ url, headers: { 'Content-Type': 'application/json' }, body: '{}' });

describe('HTTP sender', () => {
  let receiver: Receiver;
  beforeEach(async () => { receiver = await startReceiver(); });
  afterEach(async () => { await receiver.close(); });

  it('does not follow redirects: a 3xx is a failure and the target is never contacted', async () => {
    const target = await startReceiver();
    receiver.respondWith((_q, res) => { res.writeHead(307, { Location: `${target.url}/elsewhere` }).end(); });
    const outcome = await send(receiver.url);
    expect(outcome).toMatchObject({ status: 307 });
    expect(target.received).toHaveLength(0);
    // Positive control: the target is reachable and counts what reaches it.
    expect(await send(`${target.url}/elsewhere`)).toMatchObject({ status: 200 });
    expect(target.received).toHaveLength(1);
    await target.close();
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    receiver.respondWith(() => { /* never answers */ });
    const started = Date.now();
    const outcome = await send(receiver.url, { timeoutMs: 150 });
    expect(outcome).toMatchObject({ status: null, error: 'timed out after 150 ms' });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('times out a receiver that sends headers and then stalls its error body', async () => {
    receiver.respondWith((_q, res) => { res.writeHead(500); res.write('partial'); });
    const outcome = await send(receiver.url, { timeoutMs: 150 });
    expect(outcome).toMatchObject({ status: 500, bodyExcerpt: 'partial' });
  });

  it('reads at most maxResponseBytes of an answer, then drops the connection (megabytes cost nothing)', async () => {
    let written = 0;
    let closed = false;
    let connectionClosed!: () => void;
    const closedByClient = new Promise<void>((resolve) => { connectionClosed = resolve; });
    receiver.respondWith((_q, res) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.on('close', () => { closed = true; connectionClosed(); });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      // Streams up to 64 MiB for as long as the client keeps reading.
      const pump = () => {
        while (written < 64 * 1024 * 1024 && !closed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const started = Date.now();
    const outcome = await send(receiver.url, { maxResponseBytes: 4096 });
    expect(outcome).toMatchObject({ status: 500 });
    expect(outcome.status !== null && outcome.bodyExcerpt).toBe('x'.repeat(4096));
    expect(Date.now() - started).toBeLessThan(2000);
    // The sender dropped the connection: the receiver sees it close (the bound fails the test otherwise).
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([closedByClient, new Promise((_, reject) => { bound = setTimeout(() => reject(new Error('the connection stayed open')), 2000); })]);
    clearTimeout(bound);
    expect(closed).toBe(true);

    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('answers success at once on 2xx, whatever the body', async () => {
    receiver.respondWith((_q, res) => { res.writeHead(202); res.write('still going'); });
    expect(await send(receiver.url, { timeoutMs: 1000 })).toMatchObject({ status: 202, bodyExcerpt: '' });
  });

  it('reports connection errors and refused addresses without contacting them', async () => {
    await receiver.close();
    expect(await send(receiver.url)).toMatchObject({ status: null, error: expect.stringContaining('ECONNREFUSED') });
    receiver = await startReceiver();
    expect(await send(receiver.url, { allowCidrs: [] })).toMatchObject({ status: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
    expect(await send(receiver.url.replace('127.0.0.1', 'localhost'), { allowCidrs: [] })).toMatchObject({ status: null, error: expect.stringMatching(/refused: localhost resolves to 127\.0\.0\.1/) });
    expect(await send('ftp://127.0.0.1/x')).toMatchObject({ status: null, error: expect.stringMatching(/http or https/) });
    // IPv6 forms carrying the loopback address: refused by the guard, not merely unreachable.
    for (const host of ['[::127.0.0.1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]']) {
      expect(await send(receiver.url.replace('127.0.0.1', host), { allowCidrs: [] }), host).toMatchObject({ status: null, error: expect.stringMatching(/^refused: .* carries 127\.0\.0\.1 is a loopback address/) });
    }
    const resolve = async () => [{ address: '::7f00:1', family: 6 }];
    expect(await send('http://sneaky.example.test/', { resolve, allowCidrs: [] })).toMatchObject({ status: null, error: expect.stringMatching(/sneaky\.example\.test resolves to ::7f00:1 \(IPv4-compatible\) carries 127\.0\.0\.1/) });
    expect(receiver.received).toHaveLength(0);
    // Positive control: with loopback allowed, the same receiver gets the request.
    expect(await send(receiver.url)).toMatchObject({ status: 200 });
    expect(receiver.received).toHaveLength(1);
  });

  it('connects to the vetted address only, never resolving the name again (no DNS rebinding)', async () => {
    let lookups = 0;
    // A name whose first answer is the allowed receiver; a second lookup would answer a forbidden address.
    const resolve = async () => (++lookups === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]);
    const outcome = await send(receiver.url.replace('127.0.0.1', 'hooks.example.test'), { resolve });
    expect(outcome).toMatchObject({ status: 200 });
    expect(lookups).toBe(1);
    expect(receiver.received[0]!.headers.host).toBe(`hooks.example.test:${receiver.port}`);
  });

  it('refuses a name when any of its addresses is forbidden', async () => {
    const resolve = async () => [{ address: '93.184.215.14', family: 4 }, { address: '192.168.1.10', family: 4 }];
    expect(await send('http://mixed.example.test/', { resolve, allowCidrs: [] })).toMatchObject({
      status: null, error: expect.stringMatching(/mixed\.example\.test resolves to 192\.168\.1\.10 is a private address/),
    });
  });
});

describe('failures through the worker', () => {
  let rig: Rig;
  let receiver: Receiver;
  beforeEach(async () => { receiver = await startReceiver(); });
  afterEach(async () => {
    await rig.close();
    await receiver.close();
  });

  it('a refused address is a failed attempt, retried on schedule, with the reason as last_error', async () => {
    rig = createRig({ sender: { allowCidrs: [] } });
    await rig.insert(g10Hook(receiver.url));
    await rig.storage.events.append([transferEvent(rig.clock)]);
    expect(await rig.worker.tick()).toBe(1);
    expect(receiver.received).toHaveLength(0);
    // Positive control: the receiver is up and counts what reaches it; only the guard kept the attempt away.
    expect(await send(receiver.url)).toMatchObject({ status: 200 });
    expect(receiver.received).toHaveLength(1);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'pending', attempts: 1, last_status: null, next_attempt_at: rig.clock.now().getTime() + 60_000 }]);

    expect(rig.deliveryRows()[0]!.last_error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
  });

  it('a timeout is a failed attempt, retried', async () => {
    rig = createRig({ sender: { timeoutMs: 100 } });
    receiver.respondWith(() => {});
    await rig.insert(g9Hook(receiver.url, { events: ['search.performed'] }));
    await rig.storage.events.append([{ id: 'evt_timeout1', type: 'search.performed', scope: { ...TENANT }, createdAt: rig.clock.now(), data: { object: 'search' } }]);
    expect(await rig.worker.tick()).toBe(1);
    expect(rig.deliveryRows()).toMatchObject([{ state: 'pending', attempts: 1, last_error: 'timed out after 100 ms', next_attempt_at: rig.clock.now().getTime() + 1000 }]);
  });

  it('a redirect is a failed attempt that says redirects are not followed; a G9 410 disables at once', async () => {
    rig = createRig();
    receiver.respondWith((_q, res) => { res.writeHead(301, { Location: 'http://127.0.0.1:9/' }).end(); });
    const hook = g9Hook(receiver.url, { events: ['search.performed'] });
    await rig.insert(hook);
    await rig.storage.events.append([{ id: 'evt_redirect1', type: 'search.performed', scope: { ...TENANT }, createdAt: rig.clock.now(), data: {} }]);
    await rig.worker.tick();
    expect(rig.deliveryRows()[0]).toMatchObject({ state: 'pending', last_status: 301, last_error: 'HTTP 301 (redirects are not followed)' });

    receiver.respondWith((_q, res) => { res.writeHead(410).end(); });
    rig.clock.advance(1000);
    await rig.worker.tick();
    expect(rig.deliveryRows()[0]).toMatchObject({ state: 'failed', attempts: 2, last_status: 410 });
    expect(await rig.storage.webhooks.findById(hook.scope, 'g9', hook.id)).toMatchObject({ status: 'failed' });
  });
});
