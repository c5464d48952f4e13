import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientMetadata, type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callError, gatedSecret, readResource, respond, type Json } from '../mcp/mcp-support.ts';
import { CHROMIUM_PATH } from '../dashboard/chromium.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Issue 40 point 3 end to end: the MCP SDK client's own OAuth support drives the flow against the real server on
 * loopback (discovery, dynamic registration, PKCE, token exchange, refresh), headless Chromium answers the
 * dashboard's sign-in and consent pages as a person would, and a loopback server of the test receives the redirect.
 * Then the token works as its grant says: tools within the granted scopes, a gated resource through approval, and
 * nothing once the grant is revoked on the Connected apps page. One Chromium launch.
 */
let t: TestApp;
let base: string;
let browser: BrowserContext;
let launching: Promise<BrowserContext> | undefined;
let page: Page;
let profile: string;
let callbackServer: Server;
let callbackUrl: string;
let nextCallback: (url: URL) => void = () => undefined;
const keys: Record<string, string> = {};

/** A port free at this instant: the server's public URL (the OAuth issuer) must name it before it listens. */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** What a hosted client keeps: its registration, tokens and PKCE verifier, in memory; the authorization URL it would open. */
class MemoryProvider implements OAuthClientProvider {
  client: Json | undefined;
  saved: Json | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl() { return callbackUrl; }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test connector', redirect_uris: [callbackUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'state-1'; }
  clientInformation() { return this.client as never; }
  saveClientInformation(info: Json) { this.client = info; }
  tokens() { return this.saved as never; }
  saveTokens(tokens: Json) { this.saved = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(v: string) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const provider = new MemoryProvider();
const connect = async (): Promise<Client> => {
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider }));
  return client;
};

beforeAll(async () => {
  callbackServer = createServer((req, res) => {
    nextCallback(new URL(req.url!, callbackUrl));
    res.end('You can close this window.');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  profile = mkdtempSync(join(tmpdir(), 'mnemo-chromium-'));
  // Chromium starts in its own process while this one builds the app.
  launching = chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  t = await createTestApp({ env: { MNEMO_PUBLIC_URL: origin, MNEMO_DASHBOARD_URL: `${origin}/dashboard` } });
  base = await t.app.listen({ host: '127.0.0.1', port });
  keys.alice = await t.key({ user: 'alice' });
  keys.bot = await t.key({ user: 'bot', scopes: ['memories:read', 'memories:write', 'mcp:access'] });
  browser = await launching;
  page = browser.pages()[0] ?? await browser.newPage();
}, 120_000);

afterAll(async () => {
  // Closed even when the app failed to start after Chromium was launched.
  await (await launching?.catch(() => undefined))?.close();
  await t?.close();
  await new Promise((resolve) => callbackServer?.close(resolve));
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('OAuth for remote MCP, driven by the MCP SDK client and answered in Chromium', () => {
  let client: Client;

  it('discovers, registers, sends the person to sign in and consent, and exchanges the code', async () => {
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client).toMatchObject({ client_id: expect.stringMatching(/^mcl_/), token_endpoint_auth_method: 'none' });
    const asked = provider.authorizationUrl!;
    expect(asked.href.startsWith(`${base}/oauth/authorize?`)).toBe(true);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(`${base}/mcp`);

    const redirected = new Promise<URL>((resolve) => { nextCallback = resolve; });
    await page.goto(asked.href);
    expect(page.url()).toContain('/dashboard/sign-in?next=');
    await page.fill('input[name=api_key]', keys.bot!);
    await page.click('#sign-in');
    await page.waitForURL('**/dashboard/oauth/authorize?**');
    expect(await page.textContent('#client-name')).toBe('Test connector');
    expect(await page.textContent('#redirect-host')).toBe(new URL(callbackUrl).host);
    // A narrower grant than the key: read and MCP access, no writes.
    await page.uncheck('input[name=scopes][value="memories:write"]');
    await page.check('input[name=scopes][value="memories:read"]');
    await page.check('input[name=scopes][value="mcp:access"]');
    await page.click('#approve');
    const callback = await redirected;
    expect(callback.searchParams.get('state')).toBe('state-1');

    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await transport.finishAuth(callback.searchParams);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'memories:read mcp:access' });
    client = await connect();
  });

  it('runs tools within the granted scopes only, in the granted workspace', async () => {
    await t.container.memories.create({ tenantId: t.tenant, mode: 'live', workspace: 'default' }, await t.container.apiKeys.authenticate(keys.alice!),
      { title: 'Deploy checklist', content: 'Run the database migrations before deploying.' });
    const found = await call(client, 'memory_search', { query: 'database migrations' });
    expect(JSON.stringify(found)).toContain('Deploy checklist');
    expect((await callError(client, 'memory_create', { content: 'not allowed' })).code).toBe('PERMISSION_DENIED');
    expect((await callError(client, 'memory_search', { query: 'x', workspace: 'other' })).message).toMatch(/workspace default only/);
  });

  it('reads a gated resource through a person\'s approval, as a key does', async () => {
    await gatedSecret(base, keys.alice!, { name: 'prod.db', value: 'postgres://s3cret', uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const first = await readResource(client, 'svc://secrets/prod/db', 'connector needs the database');
    expect(first.access).toMatchObject({ access: 'pending', requestedBy: 'bot' });
    await respond(base, keys.alice!, first.access.approvalId as string, 'approve');
    expect((await readResource(client, 'svc://secrets/prod/db')).text).toBe('postgres://s3cret');
  });

  it('refreshes when the access token stops working, rotating the refresh token', async () => {
    const before = provider.saved!;
    provider.saved = { ...before, access_token: 'mnemo_oat_no-longer-valid' };
    await call(client, 'memory_search', { query: 'deploy' });
    expect(provider.saved!.access_token).not.toBe(before.access_token);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
  });

  it('lists the grant under Connected apps, and Revoke ends it', async () => {
    await page.goto(`${base}/dashboard/connected-apps`);
    const row = page.locator('#connected-apps tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toMatch(/Test connector[\s\S]*memories:read[\s\S]*mcp:access[\s\S]*default/);
    await row.locator('button.revoke').click();
    await page.waitForURL('**/dashboard/connected-apps');
    expect(await page.locator('#connected-apps tbody tr').count()).toBe(0);
    await expect(client.callTool({ name: 'memory_search', arguments: { query: 'deploy' } })).rejects.toThrow('The access was revoked');
    const audit = (await t.container.audit.list({ tenantId: t.tenant, mode: 'live' }, { action: 'oauth.*' }, { limit: 10, cursor: null })).items;
    expect(audit.map((r) => r.action).sort()).toEqual(['oauth.grant', 'oauth.revoke']);
  });
});
