import fc from 'fast-check';
import { casesFor, type CaseContext, type FuzzCase } from './cases.ts';
import type { FixtureIds } from './fixtures.ts';
import type { JsonSchema, Operation } from './openapi.ts';
import type { Transport } from './transport.ts';

/**
 * The MCP server at /mcp (hidden from /openapi.json) as operations whose body is a JSON-RPC message, one per method
 * (tools/call per tool, its arguments from the server's tools/list), so that the engine's cases make them hostile.
 */
export interface McpOperation {
  route: string;
  op: Operation;
}

const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const request = (method: string, params?: JsonSchema): JsonSchema => ({
  type: 'object', required: ['jsonrpc', 'id', 'method', ...(params ? ['params'] : [])],
  properties: { jsonrpc: { const: '2.0' }, id: { type: 'integer', minimum: 1, maximum: 1000 }, method: { const: method }, ...(params ? { params } : {}) },
});

const URIS = ['svc://secrets/prod/db', 'svc://secrets/fuzz/db', 'svc://custom/config/flags', 'svc://api-keys/key_1', 'svc://other/x/y'];

interface ListedTool { name: string; inputSchema: JsonSchema }

/** The first JSON-RPC message of an answer: a JSON body, or the first `data:` line of an SSE stream. */
function firstMessage(body: string): Record<string, unknown> {
  const data = body.split('\n').find((l) => l.startsWith('data: '));
  return JSON.parse(data ? data.slice(6) : body) as Record<string, unknown>;
}

/** The tools the server lists, asked with a valid key. */
async function listTools(send: Transport, key: string): Promise<ListedTool[]> {
  const a = await send({
    method: 'POST', url: '/mcp',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  }, 10_000);
  if (a.status !== 200) throw new Error(`MCP tools/list: ${a.status} ${a.body.slice(0, 300)}`);
  return (firstMessage(a.body).result as { tools: ListedTool[] }).tools;
}

/** A tool's argument schema with its `id` aimed at existing memories (both tenants') rather than words. */
function aimed(schema: JsonSchema, ids: FixtureIds): JsonSchema {
  const memories = ids.byPrefix.find(([prefix]) => prefix === '/api/v1/memories')?.[1] ?? [];
  if (!schema.properties?.id || memories.length === 0) return schema;
  return { ...schema, properties: { ...schema.properties, id: { enum: memories } } };
}

export async function mcpOperations(send: Transport, key: string, ids: FixtureIds): Promise<McpOperation[]> {
  const tools = await listTools(send, key);
  const post = (route: string, body: JsonSchema): McpOperation => ({
    route: `MCP ${route}`,
    op: {
      method: 'POST', path: '/mcp', body, credential: 'bearer',
      parameters: [{ name: 'MCP-Protocol-Version', in: 'header', schema: { enum: PROTOCOL_VERSIONS } }],
    },
  });
  const calls = tools.map((t) => post(`tools/call ${t.name}`, request('tools/call', {
    type: 'object', required: ['name', 'arguments'], properties: { name: { const: t.name }, arguments: aimed(t.inputSchema, ids) },
  })));
  const read = request('resources/read', {
    type: 'object', required: ['uri'],
    properties: { uri: { enum: URIS }, _meta: { type: 'object', properties: { 'mnemo/reason': { type: 'string' } } } },
  });
  const initialize = request('initialize', {
    type: 'object', required: ['protocolVersion', 'capabilities', 'clientInfo'],
    properties: {
      protocolVersion: { enum: PROTOCOL_VERSIONS }, capabilities: { type: 'object' },
      clientInfo: { type: 'object', required: ['name', 'version'], properties: { name: { type: 'string' }, version: { type: 'string' } } },
    },
  });
  const paged = { type: 'object', properties: { cursor: { type: 'string' } } };
  const notification: JsonSchema = {
    type: 'object', required: ['jsonrpc', 'method'], properties: { jsonrpc: { const: '2.0' }, method: { const: 'notifications/initialized' } },
  };
  const batchItems = [request('tools/list', paged), request('ping'), read, notification, calls[0]?.op.body ?? request('ping')];
  return [
    post('initialize', initialize),
    post('tools/list', request('tools/list', paged)),
    ...calls,
    post('resources/list', request('resources/list', paged)),
    post('resources/templates/list', request('resources/templates/list', paged)),
    post('resources/read', read),
    post('ping', request('ping')),
    post('notification', notification),
    post('batch', { type: 'array', minItems: 1, maxItems: 4, items: { anyOf: batchItems } }),
    { route: 'MCP GET /mcp', op: { method: 'GET', path: '/mcp', parameters: [], credential: 'bearer' } },
    { route: 'MCP DELETE /mcp', op: { method: 'DELETE', path: '/mcp', parameters: [], credential: 'bearer' } },
  ];
}

/** What an MCP client must send as Accept; sometimes something else (the SDK answers 406). */
const ACCEPT = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json, text/event-stream') },
  { weight: 1, arbitrary: fc.constantFrom(null, 'application/json', 'text/event-stream', '*/*', '%zz', 'application/json;q=0, text/event-stream') },
);

/** Cases for one MCP operation: the engine's cases for its body, headers and key, with an Accept header. */
export function mcpCases(m: McpOperation, ctx: CaseContext): fc.Arbitrary<FuzzCase> {
  return fc.tuple(casesFor(m.op, ctx), ACCEPT).map(([c, accept]) => {
    if (accept !== null) c.request.headers.accept = accept;
    if (accept !== 'application/json, text/event-stream') c.notes.push(accept === null ? 'no Accept' : `Accept: ${accept}`);
    return { ...c, route: m.route };
  });
}
