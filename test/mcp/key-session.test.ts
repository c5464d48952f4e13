import { InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpDeps } from '../../src/app/mcp-deps.ts';
import { VERSION } from '../../src/app/version.ts';
import { createMnemoMcpServer } from '../../src/mcp/mcp-server.ts';
import { keySession } from '../../src/mcp/session.ts';
import { sharedTestApp } from '../support/test-app.ts';
import { call, callError, connected } from './mcp-support.ts';

/**
 * The session `mnemo mcp` serves stdio with (keySession), over the SDK's in-memory transport so that many calls stay
 * cheap: each call authenticates the key again and counts against its limits, as each HTTP request does.
 * test/mcp/stdio.test.ts runs the real process.
 */
const app = sharedTestApp();
// Built before the tests (a PostgreSQL store migrates first: slow on a busy machine), not inside the first one.
beforeAll(async () => { await app(); });
afterAll(() => app.close());

async function clientFor(key: string) {
  const t = await app();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMnemoMcpServer(mcpDeps(t.container), keySession(t.container, key, { defaultWorkspace: 'default', userAgent: 'test' }), { version: VERSION });
  await server.connect(serverSide);
  return { t, client: await connected(clientSide) };
}

describe('MCP key session (stdio)', () => {
  it('counts every call against the key\'s gateway limit and answers RATE_LIMITED as a tool error once it is spent', async () => {
    const t = await app();
    const key = await t.key({ tier: 'free', scopes: ['memories:read'] });
    const { client } = await clientFor(key);
    // Spend the free tier's 60 a minute down to the last request (directly: cheap on every store), then call.
    const principal = await t.container.apiKeys.authenticate(key);
    for (let d = await t.container.limits.gateway(principal); d!.remaining > 1;) d = await t.container.limits.gateway(principal);
    await call(client, 'memory_list');
    const refused = await callError(client, 'memory_list');
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 60, remaining: 0, retryAfterSeconds: expect.any(Number) } });
    await client.close();
  });

  it('stops a key revoked while connected at its very next call', async () => {
    const t = await app();
    const { record, key } = await t.container.apiKeys.create({
      tenantId: t.tenant, userId: 'bot', tier: 'enterprise', mode: 'live', scopes: ['memories:read', 'memories:write'],
    });
    const { client } = await clientFor(key);
    await call(client, 'memory_create', { content: 'before the revocation' });
    expect(await t.container.apiKeys.revoke(record.id)).toBe(true);
    expect(await callError(client, 'memory_list')).toMatchObject({ code: 'UNAUTHORIZED', message: 'API key has been revoked' });
    await client.close();
  });
});
