import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMnemoClient, MnemoError, verifyMemoryEventSignature, type MnemoClient } from '../../src/client/index.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { startReceiver, waitFor, type Receiver } from '../webhooks/support.ts';

/**
 * The TypeScript client against a real server on loopback (one for the file, a tenant per test): every group of
 * operations, errors as MnemoError, 429 retries, webhooks delivered to a real receiver and the event stream resumed.
 */
describe('the TypeScript client (mnemo/client)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let baseUrl: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' } });
    t.container.deliveries.start();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const freshClient = async (options: { workspace?: string } = {}): Promise<MnemoClient> =>
    createMnemoClient({ baseUrl, apiKey: await t.freshTenant(), ...options });

  it('creates, reads, updates, lists, searches and deletes memories', async () => {
    const client = await freshClient();
    const created = await client.memories.create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays', tags: ['ops'] });
    const id = created.data.id;
    expect(created.data).toMatchObject({ title: 'Deploys', tags: ['ops'], version: 1 });
    expect((await client.memories.get(id)).data.access_count).toBe(1);
    expect((await client.memories.update(id, { content: 'We deploy with blue/green on Thursdays' })).data.version).toBe(2);
    await client.memories.create({ title: 'Lunch', content: 'The team eats at noon', tags: ['team'] });
    const listed = await client.memories.list({ tags: 'ops' });
    expect(listed.data.map((m) => m.id)).toEqual([id]);
    const found = await client.memories.search({ query: 'deploy blue green Thursdays', threshold: 0 });
    expect(found.data.results[0]?.id).toBe(id);
    const hybrid = await client.memories.hybrid({ query: 'deploy Thursdays', threshold: 0 });
    expect(hybrid.matches[0]?.id).toBe(id);
    expect((await client.memories.delete(id)).data.id).toBe(id);
    const error = await client.memories.get(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MnemoError);
    expect(error).toMatchObject({ code: 'MEMORY_NOT_FOUND', status: 404, requestId: expect.stringMatching(/^req_/) });
  });

  it('supersedes, reads history and similar memories, and forgets by filter', async () => {
    const key = await t.freshTenant({ scopes: ['memories:read', 'memories:write', 'memories:forget'] });
    const client = createMnemoClient({ baseUrl, apiKey: key });
    const old = (await client.memories.create({ title: 'Office', content: 'The office is in Leeds', valid_from: '2025-01-01' })).data;
    const now = (await client.memories.create({ title: 'Office', content: 'The office is in York', valid_from: '2026-01-01' })).data;
    expect((await client.memories.supersede(old.id, now.id)).data.superseded_by).toBe(now.id);
    await client.memories.update(now.id, { title: 'Office address' });
    const history = await client.memories.history(now.id);
    expect(history.data.versions.map((v) => v.title)).toEqual(['Office']);
    expect(history.data.chain.supersedes.map((m) => m.id)).toEqual([old.id]);
    const similar = await client.memories.similar(now.id, { threshold: 0 });
    expect(similar.data.memory_id).toBe(now.id);
    const tagged = await client.memories.create({ title: 'Old badge code', content: '4321', tags: ['badges'] });
    const forgotten = await client.memories.forget({ filter: { tags: ['badges'] } });
    expect(forgotten.data).toMatchObject({ deleted: 1, ids: [tagged.data.id] });
  });

  it('runs a batch and makes embeddings', async () => {
    const client = await freshClient();
    const batch = await client.batch({ operations: [{ type: 'create', data: { content: 'Batch one' } }, { type: 'search', query: 'batch', options: { threshold: 0 } }] });
    expect(batch.data.operations.map((r) => r.status)).toEqual(['success', 'success']);
    const embedded = await client.embeddings.create({ input: ['hello world', 'bye'], model: 'mnemo-embed-768' });
    expect(embedded.data.map((e) => e.embedding.length)).toEqual([768, 768]);
    expect(embedded.usage.total_tokens).toBeGreaterThan(0);
  });

  it('keeps workspaces apart', async () => {
    const client = await freshClient({ workspace: 'alpha' });
    await client.memories.create({ title: 'In alpha', content: 'Only alpha sees this' });
    expect((await client.memories.list()).data).toHaveLength(1);
    expect((await client.withWorkspace('beta').memories.list()).data).toHaveLength(0);
  });

  it('manages secrets and API keys (G11)', async () => {
    const client = await freshClient();
    expect((await client.secrets.create({ name: 'prod.db', value: 's3cret', tags: ['db'] })).version).toBe(1);
    expect((await client.secrets.update('prod.db', { value: 'n3w' })).version).toBe(2);
    expect((await client.secrets.get('prod.db')).value).toBe('n3w');
    expect((await client.secrets.get('prod.db', { version: 1 })).value).toBe('s3cret');
    expect((await client.secrets.list()).data.map((s) => s.name)).toEqual(['prod.db']);
    await client.secrets.delete('prod.db');
    await expect(client.secrets.get('prod.db')).rejects.toMatchObject({ code: 'RESOURCE_NOT_FOUND', status: 404 });

    const made = await client.apiKeys.create({ name: 'ci', scopes: ['memories:read'] });
    expect(made.key).toMatch(/^mnemo_live_/);
    expect((await client.apiKeys.update(made.id, { name: 'ci-2' })).name).toBe('ci-2');
    expect((await client.apiKeys.get(made.id)).scopes).toEqual(['memories:read']);
    const rotated = await client.apiKeys.rotate(made.id, { gracePeriodSeconds: 0 });
    expect(rotated.key).not.toBe(made.key);
    await client.apiKeys.revoke(rotated.id);
    expect((await client.apiKeys.list()).data.find((k) => k.id === rotated.id)?.revokedAt).not.toBeNull();
    // The rotated key works as a client key of its own until revoked: now it is refused.
    await expect(createMnemoClient({ baseUrl, apiKey: rotated.key! }).memories.list()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('asks for an MCP approval, has it answered by an approver, and reads with its token', async () => {
    const requester = await freshClient();
    const approver = createMnemoClient({ baseUrl, apiKey: await t.key({ user: 'approver-1' }) });
    await requester.secrets.create({ name: 'prod.api', value: 'token-value' });
    await requester.mcp.registerResource({ uri: 'svc://secrets/prod/api', name: 'Prod API', approvers: ['approver-1'] });
    await expect(requester.mcp.readResource('svc://secrets/prod/api')).rejects.toMatchObject({ status: 403, code: 'PERMISSION_DENIED' });
    const asked = await requester.mcp.requestApproval({ resource: 'svc://secrets/prod/api', reason: 'deploy' });
    expect(asked.status).toBe('pending');
    expect((await approver.mcp.listApprovals({ status: 'pending' })).data.map((a) => a.approvalId)).toEqual([asked.approvalId]);
    const answered = await approver.mcp.respond(asked.approvalId, { action: 'approve' });
    expect((await requester.mcp.getApproval(asked.approvalId)).status).toBe('approved');
    expect((await requester.mcp.readResource('svc://secrets/prod/api', answered.accessToken!)).value).toBe('token-value');
    expect((await requester.mcp.listResources()).resources.map((r) => r.uri)).toEqual(['svc://secrets/prod/api']);
  });

  it('registers a webhook whose deliveries verify with the secret it answered', async () => {
    const client = await freshClient();
    const hook = await client.webhooks.create({ url: `${receiver.url}/memories`, events: ['memory.created'] });
    expect((await client.webhooks.list()).data.webhooks.map((w) => w.id)).toEqual([hook.data.id]);
    expect((await client.webhooks.update(hook.data.id, { active: true })).data.active).toBe(true);
    const memory = await client.memories.create({ title: 'Hooked', content: 'Delivered to a receiver' });
    await waitFor(() => receiver.received.some((r) => r.url === '/memories' && r.body.includes(memory.data.id)));
    const delivery = receiver.received.find((r) => r.body.includes(memory.data.id))!;
    expect(verifyMemoryEventSignature({ payload: delivery.body, signature: delivery.headers['x-service-signature'], secret: hook.data.secret! })).toBe(true);
    expect(verifyMemoryEventSignature({ payload: `${delivery.body} `, signature: delivery.headers['x-service-signature'], secret: hook.data.secret! })).toBe(false);
    expect((await client.webhooks.get(hook.data.id)).data.id).toBe(hook.data.id);
    expect((await client.webhooks.delete(hook.data.id)).data.deleted).toBe(true);
  });

  it('iterates the event stream and resumes after the last event it saw', async () => {
    const client = await freshClient();
    const first = await client.memories.create({ title: 'One', content: 'first' });
    const stream = await client.events.stream({ events: ['memory.created'] });
    const second = await client.memories.create({ title: 'Two', content: 'second' });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.data.id as string);
      break;
    }
    expect(seen).toEqual([second.data.id]);
    const resumeFrom = stream.lastEventId!;
    expect(resumeFrom).toMatch(/^evt_/);
    const third = await client.memories.create({ title: 'Three', content: 'third' });
    const resumed = await client.events.stream({ events: ['memory.created'], lastEventId: resumeFrom });
    for await (const event of resumed) {
      expect(event).toMatchObject({ type: 'memory.created', id: expect.stringMatching(/^evt_/) });
      expect(event.data.id).toBe(third.data.id);
      break;
    }
    expect(first.data.id).not.toBe(third.data.id);
  });

  it('reopens a dropped stream with Last-Event-ID, so nothing written meanwhile is missed', async () => {
    const key = await t.freshTenant();
    const client = createMnemoClient({ baseUrl, apiKey: key });
    const stream = await client.events.stream({ events: ['memory.created'] });
    const iterator = stream[Symbol.asyncIterator]();
    const one = await client.memories.create({ title: 'Before the drop', content: 'one' });
    expect((await iterator.next()).value.data.id).toBe(one.data.id);
    // Drop every open connection (the stream's too), then write while the client is away (in process, not over a
    // connection the drop may have closed).
    t.app.server.closeAllConnections();
    const two = (await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: { title: 'While away', content: 'two' } })).json() as { data: { id: string } };
    expect((await iterator.next()).value.data.id).toBe(two.data.id);
    stream.close();
  });

  it('retries a 429 after the wait it names, and throws MnemoError when retries are off', async () => {
    let answered429 = 0;
    const key = await t.freshTenant();
    const client = createMnemoClient({
      baseUrl, apiKey: key,
      // The first answer is a 429 as Mnemo sends it, the rest go to the server.
      fetch: async (request) => answered429++ === 0
        ? new Response(JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } }), { status: 429, headers: { 'retry-after': '0' } })
        : fetch(request),
    });
    expect((await client.memories.create({ title: 'Retried', content: 'after a 429' })).data.title).toBe('Retried');
    expect(answered429).toBe(2);

    // A free key's gateway limit (60 a minute) spent for real: the 61st request is refused and its wait is too long
    // to retry. Windows are aligned to the clock's minute: a round that straddles one is followed by another.
    const free = createMnemoClient({ baseUrl, apiKey: await t.key({ tier: 'free' }), retry: { maxDelayMs: 10 } });
    let refused: unknown[] = [];
    for (let round = 0; round < 2 && refused.length === 0; round++) {
      const outcomes = await Promise.all(Array.from({ length: 61 }, () => free.memories.list({ limit: 1 }).then(() => null, (e: unknown) => e)));
      refused = outcomes.filter((o) => o !== null);
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toBeInstanceOf(MnemoError);
    expect(refused[0]).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: expect.any(Number) });

    // `retry: false`: the first 429 is the answer, sent once.
    let sent = 0;
    const once = createMnemoClient({
      baseUrl, apiKey: key, retry: false,
      fetch: async () => {
        sent++;
        return new Response(JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } }), { status: 429, headers: { 'retry-after': '0' } });
      },
    });
    const error = await once.memories.list({ limit: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MnemoError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(sent).toBe(1);
  });

  it('rejects opening a stream the server refuses (a key without memories:read)', async () => {
    const client = createMnemoClient({ baseUrl, apiKey: await t.freshTenant({ scopes: ['secrets:read'] }) });
    await expect(client.events.stream()).rejects.toMatchObject({ name: 'MnemoError', status: 403, code: 'PERMISSION_DENIED' });
  });

  it('reports a validation error in the surface envelope as MnemoError with its details', async () => {
    const client = await freshClient();
    const error = await client.memories.create({ title: '', content: 'x' }).catch((e: unknown) => e) as MnemoError;
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'title' })]));
  });
});
