import { InMemoryTransport } from '@modelcontextprotocol/client';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpDeps } from '../../src/app/mcp-deps.ts';
import { VERSION } from '../../src/app/version.ts';
import type { InjectOptions } from 'fastify';
import { ALL_PERMISSIONS, type Principal } from '../../src/core/api-keys/api-key.types.ts';
import { OPERATIONS, policyOf, requireDeclaredOperation, type OperationName, type Quota } from '../../src/core/operations/catalog.ts';
import type { LimitsService } from '../../src/core/rate-limit/tier-limits.ts';
import { createMnemoMcpServer } from '../../src/mcp/mcp-server.ts';
import { MEMORY_TOOL_OPERATIONS } from '../../src/mcp/memory-tools.ts';
import { keySession } from '../../src/mcp/session.ts';
import { callError, connected } from '../mcp/mcp-support.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';

/**
 * Issue 36 point 1: every route, MCP tool and dashboard action runs a core operation, whose policy (permission,
 * audit, quota, idempotency) is written once in core/operations/catalog.ts.
 */

/** Routes that run no operation, each for a reason: the framework's and the server's own (no key involved). */
const OUTSIDE_OPERATIONS = [/^\/docs/, /^\/openapi\.json$/, /^\/health$/, /^\/api\/v1\/health$/, /^\/metrics$/, /^\/mcp$/,
  // OAuth's protocol endpoints: no key involved (core/oauth decides and audits what they do).
  /^\/\.well-known\/oauth-/, /^\/oauth\//];

/** Operations no route runs: run by MCP tools only, or by the dashboard only. */
const NOT_ON_ROUTES: readonly OperationName[] = ['memory.search_keyword'];

describe('operations: one policy per operation, every entry point runs one', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t?.close());

  it('every route of every surface and of the dashboard names an operation of the catalogue', () => {
    const routes = t.app.routeOperations();
    const unnamed = routes.filter((r) => r.operation === undefined && !OUTSIDE_OPERATIONS.some((re) => re.test(r.url)));
    expect(unnamed.map((r) => `${r.methods.join(',')} ${r.url}`)).toEqual([]);
    const named = (r: (typeof routes)[number]): string[] => (r.operation === undefined || r.operation === null ? [] : [r.operation].flat());
    for (const name of routes.flatMap(named)) expect(Object.hasOwn(OPERATIONS, name), name).toBe(true);
    // Only the dashboard's sign-in and assets run none; every API route runs one.
    const without = routes.filter((r) => r.operation === null && !r.methods.includes('HEAD')).map((r) => `${r.methods.join(',')} ${r.url}`);
    expect(without.sort()).toEqual(['GET /dashboard/assets/:name', 'GET /dashboard/sign-in', 'POST /dashboard/sign-in'].sort());
    // Every operation is run somewhere: no policy is written for nothing.
    const run = new Set<string>([...routes.flatMap(named), ...Object.values(MEMORY_TOOL_OPERATIONS).flat()]);
    const idle = (Object.keys(OPERATIONS) as OperationName[]).filter((name) => !run.has(name) && !NOT_ON_ROUTES.includes(name));
    expect(idle).toEqual([]);
  });

  it('every operation that names a quota is refused once that quota is spent, whichever route runs it', async () => {
    const spend: Record<Quota, (l: LimitsService) => (p: Principal) => Promise<unknown>> = {
      'memory-writes': (l) => l.memoryWrite, embeddings: (l) => l.embeddings, 'webhook-creations': (l) => l.webhookCreate, batches: (l) => l.batch,
    };
    const memory = { title: 't', content: 'c' };
    /** A request of each operation that charges a quota, valid but for the spent quota. */
    const requests: Partial<Record<OperationName, (key: string, id: string) => InjectOptions>> = {
      'memory.create': (key) => ({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: memory }),
      'memory.update': (key, id) => ({ method: 'PUT', url: `/api/v1/memories/${id}`, headers: { 'x-api-key': key }, payload: { title: 'u' } }),
      'memory.delete': (key, id) => ({ method: 'DELETE', url: `/api/v1/memories/${id}`, headers: { 'x-api-key': key } }),
      'memory.delete_many': (key, id) => ({ method: 'POST', url: '/api/v1/memory/bulk/delete', headers: { authorization: `Bearer ${key}` }, payload: { memory_ids: [`mem_${id}`] } }),
      'memory.supersede': (key, id) => ({ method: 'POST', url: `/api/v1/memories/${id}/supersede`, headers: { 'x-api-key': key }, payload: { by: id } }),
      'memory.forget': (key) => ({ method: 'POST', url: '/api/v1/memories/forget', headers: { 'x-api-key': key }, payload: { filter: { type: 'context' } } }),
      'memory.ingest': (key) => ({ method: 'POST', url: '/api/v1/memories/ingest', headers: { 'x-api-key': key }, payload: { mode: 'raw', messages: [{ role: 'user', content: 'c' }] } }),
      'embedding.create': (key) => ({ method: 'POST', url: '/api/v1/embeddings', headers: { authorization: `Bearer ${key}` }, payload: { input: 'x' } }),
      'batch.run': (key) => ({ method: 'POST', url: '/api/v1/batch', headers: { authorization: `Bearer ${key}` }, payload: { operations: [{ type: 'create', data: { content: 'c' } }] } }),
      'webhook.create': (key) => ({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: 'https://example.com/hook', events: ['payment.successful'] } }),
      'security_webhook.create': (key) => ({ method: 'POST', url: '/v1/security/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: 'https://example.com/hook', events: ['secret.created'] } }),
    };
    const charged = (Object.keys(OPERATIONS) as OperationName[]).filter((name) => policyOf(name).quota !== undefined);
    expect(charged.filter((name) => requests[name] === undefined)).toEqual([]);
    for (const name of charged) {
      // Every scope, the opt-in memories:forget included.
      const key = await t.key({ tier: 'free', scopes: [...ALL_PERMISSIONS] });
      const id = json(await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: memory })).data.id as string;
      const principal = await t.container.apiKeys.authenticate(key);
      const charge = spend[policyOf(name).quota!](t.container.limits);
      for (let i = 0; i < 10_000; i++) {
        try { await charge(principal); } catch { break; }
      }
      const res = await t.app.inject(requests[name]!(key, id));
      expect(res.statusCode, `${name}: ${res.body}`).toBe(429);
    }
  });

  it('a route that names no operation cannot be registered', () => {
    const check = requireDeclaredOperation('G0 test');
    expect(() => check({ method: 'GET', url: '/x', config: { operation: 'memory.read' } } as unknown as RouteOptions)).not.toThrow();
    expect(() => check({ method: 'GET', url: '/x', config: { operation: null } } as unknown as RouteOptions)).not.toThrow();
    expect(() => check({ method: ['GET', 'POST'], url: '/x' } as unknown as RouteOptions))
      .toThrow('G0 test: route GET,POST /x names no operation: set config.operation (core/operations/catalog.ts)');
    expect(() => check({ method: 'GET', url: '/x', config: { operation: 'memory.nonsense' } } as unknown as RouteOptions)).toThrow('names no operation');
  });

  it('every MCP tool runs an operation, and its permission is the operation\'s', async () => {
    const key = await t.key({ scopes: ['memories:read'] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMnemoMcpServer(mcpDeps(t.container), keySession(t.container, key, { defaultWorkspace: 'default', userAgent: 'test' }), { version: VERSION });
    await server.connect(serverSide);
    const client = await connected(clientSide);
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toEqual(Object.keys(MEMORY_TOOL_OPERATIONS).sort());
    // memory.create needs memories:write, which this key lacks: refused by the catalogue's rule, before any work.
    expect(await callError(client, 'memory_create', { content: 'x' })).toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'memories:write' } });
    await client.close();
  });
});
