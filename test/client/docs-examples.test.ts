import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMnemoClient } from 'mnemo/client';
import { run as runMemoryClient } from './examples/memory-client.ts';
import { run as runTypescriptClient } from './examples/typescript-client.ts';
import { webhookReceiver } from './examples/webhook-receiver.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { waitFor } from '../webhooks/support.ts';

const root = join(import.meta.dirname, '..', '..');

/**
 * Every code block of docs/clients.md is one of these files, word for word; the files under examples/ run here and
 * the integrations' examples in their own tests (test/integrations/*.test.ts).
 */
const EXAMPLE_FILES = [
  'test/client/examples/typescript-client.ts',
  'test/client/examples/memory-client.ts',
  'test/client/examples/webhook-receiver.ts',
  'integrations/langchain/example.ts',
  'integrations/vercel-ai/example.ts',
];

describe('docs/clients.md examples', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' } });
    t.container.deliveries.start();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  it('shows only tested files, each of them once', () => {
    const page = readFileSync(join(root, 'docs/clients.md'), 'utf8');
    const blocks = [...page.matchAll(/^```\w*\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trimEnd());
    const files = EXAMPLE_FILES.map((file) => readFileSync(join(root, file), 'utf8').trimEnd());
    expect(blocks).toHaveLength(files.length);
    for (const [i, block] of blocks.entries()) expect(files, `code block ${i + 1} of docs/clients.md is no example file`).toContain(block);
    expect(new Set(blocks).size).toBe(files.length);
  });

  it('runs the TypeScript client example', async () => {
    const out = await runTypescriptClient({ baseUrl, apiKey: await t.freshTenant() });
    expect(out.found.results[0]?.id).toBe(out.memory.id);
    expect(out.matches[0]?.id).toBe(out.memory.id);
    expect(out.history.chain.superseded_by.map((m) => m.id)).toEqual([out.moved.id]);
    expect(out.lastEventId).toMatch(/^evt_/);
  });

  it('runs the @lanonasis/memory-client example', async () => {
    const { memory, found } = await runMemoryClient({ baseUrl, apiKey: await t.freshTenant() });
    expect(found?.results.map((r) => r.id)).toContain(memory?.id);
  });

  it('runs the webhook receiver: G9 and G11 deliveries verify, a forged one is refused', async () => {
    const secret = 'receiver-secret-0123456789abcdef';
    const events: { id: string; type: string }[] = [];
    const server = webhookReceiver(secret, (event) => events.push(event));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const mnemo = createMnemoClient({ baseUrl, apiKey: await t.freshTenant() });
      await mnemo.webhooks.create({ url: `${url}/memories`, events: ['memory.created'], secret });
      const security = await fetch(`${baseUrl}/v1/security/webhooks`, {
        method: 'POST', headers: { authorization: `Bearer ${await t.key()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${url}/security`, events: ['secret.created'], secret }),
      });
      expect(security.status).toBe(201);
      await mnemo.memories.create({ title: 'Hooked', content: 'Delivered' });
      await mnemo.secrets.create({ name: 'hooked', value: 'v' });
      await waitFor(() => events.length === 2);
      expect(events.map((e) => e.type).sort()).toEqual(['memory.created', 'secret.created']);
      const forged = await fetch(url, { method: 'POST', body: '{"id":"evt_x","type":"memory.created"}', headers: { 'x-service-signature': 'f'.repeat(64) } });
      expect(forged.status).toBe(400);
      expect(events).toHaveLength(2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
