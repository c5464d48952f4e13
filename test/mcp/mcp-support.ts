import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { expect } from 'vitest';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An SDK client connected to Mnemo's MCP server over Streamable HTTP at `<base>/mcp`. */
export async function httpClient(base: string, key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  }));
  return client;
}

export async function connected(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool that must succeed; returns its JSON answer (the text content, which the structured content repeats). */
export async function call(client: Client, name: string, args: Json = {}): Promise<Json> {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content as { type: string; text: string }[])[0]!.text;
  expect(res.isError, text).toBeFalsy();
  const body = JSON.parse(text) as Json;
  expect(res.structuredContent).toEqual(body);
  return body;
}

/** Calls a tool that must fail as an MCP tool error; returns the error ({code, message, details}) or the SDK's text. */
export async function callError(client: Client, name: string, args: Json = {}): Promise<Json> {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content as { type: string; text: string }[])[0]!.text;
  expect(res.isError, text).toBe(true);
  try {
    return (JSON.parse(text) as Json).error as Json;
  } catch {
    return { text };
  }
}

/** Reads a resource; returns its first content's text and the answer's `mnemo/access` meta. */
export async function readResource(client: Client, uri: string, reason?: string): Promise<{ text: string; access: Json; mimeType?: string }> {
  const res = await client.readResource({ uri, ...(reason === undefined ? {} : { _meta: { 'mnemo/reason': reason } }) });
  const first = res.contents[0] as { text: string; mimeType?: string };
  return { text: first.text, access: (res._meta as Json)['mnemo/access'] as Json, ...(first.mimeType ? { mimeType: first.mimeType } : {}) };
}

/** A JSON request to the real server on loopback (G1, G11 …), Authorization: Bearer. */
export async function rest(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Json : {} };
}

/** G11 set-up of a gated secret: the secret, and a registration of `uri` that `approvers` answer. */
export async function gatedSecret(base: string, adminKey: string, options: { name: string; value: string; uri: string; approvers: string[]; requiresApproval?: boolean }) {
  const secret = await rest(base, adminKey, 'POST', '/v1/security/secrets', { name: options.name, value: options.value });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  const reg = await rest(base, adminKey, 'POST', '/v1/security/mcp/resources', {
    uri: options.uri, name: `Access to ${options.uri}`, approvers: options.approvers, requiresApproval: options.requiresApproval ?? true,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  return reg.body;
}

/** A person answers an approval through G11's respond route. */
export async function respond(base: string, approverKey: string, approvalId: string, action: 'approve' | 'deny', reason = 'checked') {
  const res = await rest(base, approverKey, 'POST', `/v1/security/mcp/approvals/${approvalId}/respond`, { action, reason });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
