import { InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpDeps } from '../../src/app/mcp-deps.ts';
import { VERSION } from '../../src/app/version.ts';
import { ALL_PERMISSIONS, type Permission } from '../../src/core/api-keys/api-key.types.ts';
import { createMnemoMcpServer } from '../../src/mcp/mcp-server.ts';
import { keySession } from '../../src/mcp/session.ts';
import { sharedTestApp } from '../support/test-app.ts';
import { call, callError, connected } from './mcp-support.ts';

/** memory_forget: forgetting by filter over MCP, with a scope of its own (memories:forget). */
const app = sharedTestApp();
beforeAll(async () => { await app(); });
afterAll(() => app.close());

async function clientFor(scopes?: Permission[]) {
  const t = await app();
  const key = await t.key(scopes ? { scopes } : {});
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMnemoMcpServer(mcpDeps(t.container), keySession(t.container, key, { defaultWorkspace: 'default', userAgent: 'test' }), { version: VERSION });
  await server.connect(serverSide);
  return connected(clientSide);
}

describe('MCP memory_forget', () => {
  it('needs memories:forget, which a key made without scopes lacks: memories:write is not enough', async () => {
    const client = await clientFor();
    const m = await call(client, 'memory_create', { content: 'Old plan', tags: ['plan'] });
    expect(await callError(client, 'memory_forget', { filter: { tags_any: ['plan'] } }))
      .toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'memories:forget' } });
    expect(await call(client, 'memory_get', { id: m.memory.id })).toMatchObject({ memory: { id: m.memory.id } });
    await client.close();
  });

  it('previews with dry_run, then forgets what the filter matches; an empty filter is refused', async () => {
    const client = await clientFor([...ALL_PERMISSIONS]);
    const a = (await call(client, 'memory_create', { content: 'Old plan A', tags: ['plan'], metadata: { v: 1 } })).memory;
    const b = (await call(client, 'memory_create', { content: 'Old plan B', tags: ['plan'], metadata: { v: 2 } })).memory;
    const c = (await call(client, 'memory_create', { content: 'Unrelated', tags: ['other'] })).memory;
    expect(await callError(client, 'memory_forget', { filter: {} })).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await callError(client, 'memory_forget', { filter: { created_from: 'yesterday' } })).toMatchObject({ code: 'VALIDATION_ERROR' });

    const filter = { tags_any: ['plan'], metadata: { v: [1, 2] } };
    expect(await call(client, 'memory_forget', { filter, dry_run: true })).toEqual({ dry_run: true, count: 2, ids: [a.id, b.id], ids_truncated: false });
    expect(await call(client, 'memory_forget', { filter })).toEqual({ dry_run: false, deleted: 2, ids: [a.id, b.id] });
    expect(await callError(client, 'memory_get', { id: a.id })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await call(client, 'memory_get', { id: c.id })).toMatchObject({ memory: { id: c.id } });
    await client.close();
  });
});
