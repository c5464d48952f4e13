import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/core/api-keys/api-key.types.ts';
import { createTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { call, callError, connected, gatedSecret, readResource, respond, rest, type Json } from './mcp-support.ts';

/**
 * `mnemo mcp`: the MCP server over stdio, spawned as a client would start it (bin/mnemo.js), driven by the SDK's
 * own client, on the data directory of a server that is running and answering on loopback at the same time.
 */
const MNEMO = join(import.meta.dirname, '..', '..', 'bin', 'mnemo.js');
let t: TestApp;
let base: string;
const open: Client[] = [];
/** Each spawn compiles the sources through tsx first: seconds on a busy machine. */
const SPAWNS_TIMEOUT = 120_000;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await t.close();
});

const env = (key: string, extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '', MNEMO_DATA_DIR: t.container.config.dataDir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_SQLITE_SYNCHRONOUS: 'normal',
  MNEMO_DASHBOARD_URL: 'https://mnemo.example.com/dashboard', MNEMO_API_KEY: key, ...extra,
});

/** Spawns `mnemo mcp` with this key and connects the SDK client to it. */
async function stdioClient(key: string, args: string[] = []): Promise<Client> {
  const client = await connected(new StdioClientTransport({ command: process.execPath, args: [MNEMO, 'mcp', ...args], env: env(key), stderr: 'pipe' }));
  open.push(client);
  return client;
}

async function world() {
  const tenant = uniqueTenant('stdio');
  const key = (user: string, scopes?: Permission[]) => t.key({ tenant, user, ...(scopes ? { scopes } : {}) });
  return { tenant, key, aliceKey: await key('alice'), botKey: await key('bot', ['memories:read', 'memories:write', 'mcp:access']) };
}

/**
 * One world and one `mnemo mcp` of its bot for the tests of tools and of gated secrets: a spawn costs seconds, and
 * neither test sees the other's work (memories there, secrets and their audit rows here).
 */
let botWorld: Promise<Awaited<ReturnType<typeof world>> & { bot: Client }> | undefined;
const sharedBot = () => (botWorld ??= (async () => {
  const w = await world();
  return { ...w, bot: await stdioClient(w.botKey) };
})());

describe('MCP over stdio (mnemo mcp), beside a running server', () => {
  it('lists the tools and calls each one on the store the server uses; errors are tool errors', async () => {
    const { botKey, key, bot } = await sharedBot();
    expect((await bot.listTools()).tools.map((x) => x.name).sort()).toEqual(
      ['memory_create', 'memory_delete', 'memory_forget', 'memory_get', 'memory_history', 'memory_ingest', 'memory_ingest_status', 'memory_list', 'memory_search', 'memory_supersede', 'memory_update', 'topic_list']);

    const created = (await call(bot, 'memory_create', { content: 'Backups run nightly at 02:00 UTC', tags: ['ops'] })).memory;
    // Written by the MCP process, read by the running server.
    expect((await rest(base, botKey, 'GET', `/api/v1/memories/${created.id}`)).body.data).toMatchObject({ content: 'Backups run nightly at 02:00 UTC' });
    // Written by the server, read by the MCP process.
    const viaG1 = await rest(base, botKey, 'POST', '/api/v1/memories', { title: 'On call', content: 'The on-call rota is in PagerDuty' });
    expect(viaG1.status).toBe(201);
    expect((await call(bot, 'memory_get', { id: viaG1.body.data.id })).memory.title).toBe('On call');
    expect((await call(bot, 'memory_list')).total).toBe(2);
    expect((await call(bot, 'memory_search', { query: 'nightly backups' })).results[0]).toMatchObject({ id: created.id });
    expect((await call(bot, 'memory_update', { id: created.id, tags: ['ops', 'backup'] })).memory.tags).toEqual(['ops', 'backup']);
    expect((await call(bot, 'topic_list')).topics).toEqual([]);
    expect(await call(bot, 'memory_delete', { id: created.id })).toMatchObject({ deleted: true });

    expect(await callError(bot, 'memory_get', { id: created.id })).toMatchObject({ code: 'NOT_FOUND' });
    expect((await callError(bot, 'memory_search', { query: '' })).text).toMatch(/query/);
    const other = (await world()).botKey;
    const theirs = await rest(base, other, 'POST', '/api/v1/memories', { title: 'Theirs', content: 'another tenant' });
    expect(await callError(bot, 'memory_get', { id: theirs.body.data.id })).toMatchObject({ code: 'NOT_FOUND' });

    const reader = await stdioClient(await key('reader', ['memories:read']), ['--workspace', 'notes']);
    expect(await callError(reader, 'memory_create', { content: 'x' })).toMatchObject({ code: 'PERMISSION_DENIED' });
    // --workspace: the reader's calls act in `notes`, where nothing was written.
    expect((await call(reader, 'memory_list')).total).toBe(0);
    expect((await call(reader, 'memory_list', { workspace: 'default' })).total).toBe(1);
  }, SPAWNS_TIMEOUT);

  it('reads a gated secret after a person approves through G11, and reads a denial as such', async () => {
    const { aliceKey, bot } = await sharedBot();
    await gatedSecret(base, aliceKey, { name: 'prod.db', value: 'postgres://s3cret', uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const first = await readResource(bot, 'svc://secrets/prod/db');
    expect(first.access).toMatchObject({ access: 'pending', requestedBy: 'bot', approvalUrl: expect.stringMatching(/^https:\/\/mnemo\.example\.com\/dashboard\/approvals\/appr_/) });
    await respond(base, aliceKey, first.access.approvalId as string, 'approve');
    const granted = await readResource(bot, 'svc://secrets/prod/db');
    expect(granted.text).toBe('postgres://s3cret');

    const second = (await readResource(bot, 'svc://secrets/prod/api')).access.approvalId as string;
    await respond(base, aliceKey, second, 'deny', 'no');
    expect((await readResource(bot, 'svc://secrets/prod/api')).access).toMatchObject({ access: 'denied', approvalId: second });

    const audit = await rest(base, aliceKey, 'GET', '/v1/security/audit-logs?action=mcp.read&actor=bot');
    expect((audit.body.data as Json[]).map((r) => r.metadata.transport)).toEqual(['mcp-stdio', 'mcp-stdio', 'mcp-stdio', 'mcp-stdio']);
  }, SPAWNS_TIMEOUT);

  it('stops at once with a message when MNEMO_API_KEY is missing or not a key', async () => {
    for (const key of ['', 'mnemo_live_notakey']) {
      const child = spawn(process.execPath, [MNEMO, 'mcp'], { env: env(key), stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toMatch(key === '' ? /MNEMO_API_KEY is not set/ : /MNEMO_API_KEY: API key is invalid/);
      expect(stdout).toBe('');
    }
  }, SPAWNS_TIMEOUT);
});
