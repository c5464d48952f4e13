import { InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpDeps } from '../../src/app/mcp-deps.ts';
import { VERSION } from '../../src/app/version.ts';
import { DEFAULT_PERMISSIONS, type Permission } from '../../src/core/api-keys/api-key.types.ts';
import { createMnemoMcpServer } from '../../src/mcp/mcp-server.ts';
import { keySession } from '../../src/mcp/session.ts';
import { createIngestTestApp, ingestApi, isExtraction, runIngestions, type IngestTestApp } from '../support/ingestion.ts';
import { call, callError, connected } from './mcp-support.ts';

/** memory_ingest and memory_ingest_status: an agent hands over a conversation; only a person reviews (no MCP tool does). */
describe('MCP ingestion tools', () => {
  let t: IngestTestApp;
  beforeAll(async () => {
    t = await createIngestTestApp();
    t.llm.setScript((req) => (isExtraction(req) ? { json: { facts: [{ content: 'Frank is allergic to peanuts', sources: [0] }] } } : { json: {} }));
  });
  afterAll(() => t?.close());

  async function clientFor(key: string) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMnemoMcpServer(mcpDeps(t.container), keySession(t.container, key, { defaultWorkspace: 'default', userAgent: 'test' }), { version: VERSION });
    await server.connect(serverSide);
    return connected(clientSide);
  }
  const conversation = [{ role: 'user', content: 'Note that Frank is allergic to peanuts', timestamp: '2026-03-01T10:00:00Z' }];

  it('starts a job that waits for a person\'s review, and shows its proposals; there is no tool to approve them', async () => {
    const key = await t.freshTenant();
    const agent = await clientFor(key);
    const started = await call(agent, 'memory_ingest', { messages: conversation });
    expect(started).toMatchObject({ id: expect.stringMatching(/^ing_/), state: 'queued', mode: 'extract', policy: 'review', workspace: 'default', messages_count: 1 });
    expect(started.note).toMatch(/wait for a person's review/);
    await runIngestions(t);
    const status = await call(agent, 'memory_ingest_status', { id: started.id });
    expect(status).toMatchObject({
      state: 'pending_review', error: null,
      proposals: [{ id: 'p1', action: 'add', content: 'Frank is allergic to peanuts', status: 'pending', memory_id: null }],
    });
    expect(status.note).toMatch(/cannot approve/);
    expect((await agent.listTools()).tools.map((x) => x.name).filter((n) => n.includes('review'))).toEqual([]);
    // What the agent started is the same job REST shows.
    expect((await ingestApi(t.app, key).get(started.id)).json().data.state).toBe('pending_review');
    await agent.close();
  });

  it('writes at once with memories:auto_ingest; refuses auto without it, raw bad input, and other tenants\' ids', async () => {
    const plain = await clientFor(await t.freshTenant());
    expect(await callError(plain, 'memory_ingest', { messages: conversation, policy: 'auto' }))
      .toMatchObject({ code: 'PERMISSION_DENIED', details: { required: 'memories:auto_ingest' } });
    expect(await callError(plain, 'memory_ingest', { messages: [{ role: 'user', content: 'x', timestamp: 'soon' }], mode: 'raw' }))
      .toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'messages[0].timestamp' }] } });
    const readOnly = await clientFor(await t.key({ scopes: ['memories:read'] }));
    expect(await callError(readOnly, 'memory_ingest', { messages: conversation })).toMatchObject({ code: 'PERMISSION_DENIED' });

    const scopes: Permission[] = [...DEFAULT_PERMISSIONS, 'memories:auto_ingest'];
    const agent = await clientFor(await t.freshTenant({ scopes }));
    const started = await call(agent, 'memory_ingest', { messages: conversation, mode: 'raw', tags: ['health'] });
    expect(started).toMatchObject({ state: 'queued', policy: 'auto', mode: 'raw' });
    await runIngestions(t);
    const status = await call(agent, 'memory_ingest_status', { id: started.id });
    expect(status).toMatchObject({ state: 'completed', proposals: [{ status: 'applied', content: 'Note that Frank is allergic to peanuts' }] });
    const memory = await call(agent, 'memory_get', { id: status.proposals[0].memory_id });
    expect(memory.memory).toMatchObject({ tags: ['health'], metadata: { role: 'user', position: 0, timestamp: '2026-03-01T10:00:00.000Z' } });

    expect(await callError(plain, 'memory_ingest_status', { id: started.id })).toMatchObject({ code: 'NOT_FOUND' });
    for (const c of [plain, readOnly, agent]) await c.close();
  });
});
