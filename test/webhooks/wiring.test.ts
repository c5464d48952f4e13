import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.ts';
import { verifyMemoryEventSignature } from '../../src/client/webhook-receiver.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';
import { g9Hook, insertHook, startReceiver, testKeyring, waitFor, type Receiver } from './support.ts';

describe('webhook delivery wiring (config -> container -> worker)', () => {
  let t: TestApp | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('delivers a memory created over HTTP to a receiver the allow list admits', async () => {
    receiver = await startReceiver();
    const keyring = testKeyring();
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' }, overrides: { keyring } });
    const key = await t.key({ tenant: 'acme' });
    const hook = g9Hook(`${receiver.url}/in`, { scope: { tenantId: 'acme', mode: 'live', workspace: 'default' } });
    await insertHook(t.container.storage.webhooks, keyring, hook);
    t.container.deliveries.start();

    const res = await g1(t.app, key).create({ title: 'Wired', content: 'through the container' });
    expect(res.statusCode).toBe(201);
    await waitFor(() => receiver!.received.length === 1);
    const r = receiver.received[0]!;
    expect(JSON.parse(r.body)).toMatchObject({ type: 'memory.created', webhook_id: hook.id, data: { id: json(res).data.id } });
    expect(verifyMemoryEventSignature({ payload: r.body, signature: r.headers['x-service-signature'], secret: hook.secret })).toBe(true);
  });

  it('G1 and G2 creates each trigger memory.created and embedding.generated to a webhook registered over G9', async () => {
    receiver = await startReceiver();
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' } });
    const key = await t.key({ tenant: 'acme' });
    const bearer = { authorization: `Bearer ${key}` };
    const registered = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer, payload: { url: `${receiver.url}/events`, events: ['memory.created', 'embedding.generated'] } });
    expect(registered.statusCode).toBe(201);
    const secret = json(registered).data.secret as string;
    t.container.deliveries.start();

    const viaG1 = json(await g1(t.app, key).create({ title: 'From G1', content: 'first surface' })).data.id as string;
    const viaG2 = (json(await t.app.inject({ method: 'POST', url: '/api/v1/memory', headers: bearer, payload: { text: 'From G2' } })).id as string).replace(/^mem_/, '');
    await waitFor(() => receiver!.received.length === 4);
    const bodies = receiver.received.map((r) => {
      expect(verifyMemoryEventSignature({ payload: r.body, signature: r.headers['x-service-signature'], secret })).toBe(true);
      return JSON.parse(r.body) as { type: string; data: { id?: string; memory_id?: string } };
    });
    const seen = bodies.map((b) => `${b.type}:${b.data.id ?? b.data.memory_id}`).sort();
    expect(seen).toEqual([`embedding.generated:${viaG1}`, `embedding.generated:${viaG2}`, `memory.created:${viaG1}`, `memory.created:${viaG2}`].sort());
  });

  it('refuses loopback receivers when the allow list is empty (the default)', async () => {
    receiver = await startReceiver();
    const keyring = testKeyring();
    t = await createTestApp({ overrides: { keyring } });
    await insertHook(t.container.storage.webhooks, keyring, g9Hook(receiver.url, { scope: { tenantId: 'acme', mode: 'live', workspace: 'default' } }));
    await g1(t.app, await t.key({ tenant: 'acme' })).create({ title: 'x', content: 'y' });
    expect(await t.container.deliveries.tick()).toBe(1);
    expect(receiver.received).toHaveLength(0);
    // Positive control: the receiver is up and counts what reaches it; only the guard kept the attempt away.
    expect((await fetch(receiver.url, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(receiver.received).toHaveLength(1);

  });

  it('validates the variables at start, naming them', () => {
    expect(loadConfig({ MNEMO_WEBHOOK_ALLOW_CIDRS: ' 10.0.0.0/8 ,::1 ' })).toMatchObject({ webhookAllowCidrs: ['10.0.0.0/8', '::1/128'], webhookTimeoutMs: 5000 });
    expect(() => loadConfig({ MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,nonsense' })).toThrow(ConfigError);
    expect(() => loadConfig({ MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,nonsense' })).toThrow(/MNEMO_WEBHOOK_ALLOW_CIDRS.*nonsense/);
    expect(() => loadConfig({ MNEMO_WEBHOOK_TIMEOUT_MS: 'soon' })).toThrow(/MNEMO_WEBHOOK_TIMEOUT_MS/);
    expect(loadConfig({ MNEMO_WEBHOOK_TIMEOUT_MS: '750' }).webhookTimeoutMs).toBe(750);
  });
});
