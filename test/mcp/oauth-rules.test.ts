import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

/**
 * Issue 40 point 3: the refusals of Mnemo's OAuth server, through its HTTP endpoints and the dashboard's consent form
 * (app.inject on one app, a manual clock for expiry). The whole flow with a real MCP client and Chromium is
 * test/e2e/oauth-flow.test.ts.
 */
const clock = new ManualClock(Date.UTC(2026, 5, 1));
let t: TestApp;
let key: string;
const ISSUER = 'https://mnemo.example.com';
const REDIRECT = 'http://127.0.0.1:9/callback';

const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');
const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString(),
});
const token = (fields: Record<string, string>) => t.app.inject({ method: 'POST', url: '/oauth/token', ...form(fields) });
const cookiesOf = (res: LightMyRequestResponse): string => [res.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');

async function register(body: Json = { client_name: 'Test client', redirect_uris: [REDIRECT] }) {
  return t.app.inject({ method: 'POST', url: '/oauth/register', payload: body, remoteAddress: '10.0.0.1' });
}

/** A dashboard session of `apiKey`: its cookie, and the CSRF token its forms carry. */
async function signIn(apiKey: string): Promise<{ cookie: string }> {
  const form1 = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form1.body)![1]!;
  const res = await t.app.inject({
    method: 'POST', url: '/dashboard/sign-in', headers: { cookie: cookiesOf(form1), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrf, api_key: apiKey, next: '/dashboard' }).toString(),
  });
  expect(res.statusCode).toBe(303);
  return { cookie: cookiesOf(res) };
}

/** Opens the consent page as `session` and answers it; returns the redirect to the client. */
async function consent(session: { cookie: string }, params: Record<string, string>, answer: { scopes: string[]; workspace?: string; decision?: string }) {
  const page = await t.app.inject({ method: 'GET', url: `/dashboard/oauth/authorize?${new URLSearchParams(params)}`, headers: { cookie: session.cookie } });
  expect(page.statusCode, page.body).toBe(200);
  expect(page.headers['content-security-policy']).toContain(`form-action 'self' ${new URL(params.redirect_uri!).origin};`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const body = new URLSearchParams({ ...params, _csrf: csrf, workspace: answer.workspace ?? 'default', decision: answer.decision ?? 'approve' });
  for (const s of answer.scopes) body.append('scopes', s);
  return t.app.inject({ method: 'POST', url: '/dashboard/oauth/authorize', headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: body.toString() });
}

/** A registered client, an approved authorization and its code. */
async function authorized(scopes = ['memories:read']) {
  const clientId = (await register()).json().client_id as string;
  const v = verifier();
  const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challengeOf(v), code_challenge_method: 'S256', state: 'st8', resource: `${ISSUER}/mcp` };
  const res = await consent(await signIn(key), params, { scopes });
  expect(res.statusCode, res.body).toBe(303);
  const location = new URL(res.headers.location as string);
  expect(location.searchParams.get('state')).toBe('st8');
  expect(location.searchParams.get('iss')).toBe(ISSUER);
  return { clientId, verifier: v, code: location.searchParams.get('code')!, params };
}

const exchange = (a: { clientId: string; verifier: string; code: string }, extra: Record<string, string> = {}) => token({
  grant_type: 'authorization_code', client_id: a.clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, ...extra,
});

beforeAll(async () => {
  t = await createTestApp({ overrides: { clock }, env: { MNEMO_PUBLIC_URL: ISSUER, MNEMO_OAUTH_ACCESS_TTL_SECONDS: '600' } });
  key = await t.key({ user: 'alice', scopes: ['memories:read', 'memories:write', 'mcp:access'] });
});
afterAll(() => t?.close());

describe('OAuth discovery', () => {
  it('publishes the protected resource (both paths) and the authorization server; /mcp without credentials names them', async () => {
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      expect((await t.app.inject({ url })).json()).toMatchObject({ resource: `${ISSUER}/mcp`, authorization_servers: [ISSUER] });
    }
    expect((await t.app.inject({ url: '/.well-known/oauth-authorization-server' })).json()).toMatchObject({
      issuer: ISSUER, token_endpoint: `${ISSUER}/oauth/token`, registration_endpoint: `${ISSUER}/oauth/register`,
      code_challenge_methods_supported: ['S256'], grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'], scopes_supported: expect.arrayContaining(['memories:read', 'mcp:access']),
    });
    const res = await t.app.inject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="mnemo", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`);
  });
});

describe('OAuth registration', () => {
  it('registers public clients only, with https or loopback http redirect URIs', async () => {
    const ok = await register({ client_name: 'Confidential wish', redirect_uris: ['https://app.example.com/cb', REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ client_name: 'Confidential wish', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    expect(ok.json().client_secret).toBeUndefined();
    for (const [body, error] of [
      [{ redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri'],
      [{ client_name: 'x' }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_name: '' }, 'invalid_client_metadata'],
    ] as const) {
      const res = await register(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe(error);
    }
  });
});

describe('OAuth authorization and token refusals', () => {
  it('refuses plain PKCE, a missing challenge and another resource back at the client; an unknown redirect URI is not followed', async () => {
    const clientId = (await register()).json().client_id as string;
    const session = await signIn(key);
    const base = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 's', code_challenge: challengeOf(verifier()) };
    for (const [params, description] of [
      [{ ...base, code_challenge_method: 'plain' }, /S256/],
      [{ ...base, code_challenge: '' }, /PKCE is required/],
      [{ ...base, code_challenge_method: 'S256', resource: 'https://elsewhere.example.com/mcp' }, /resource must be/],
    ] as const) {
      const res = await t.app.inject({ url: `/dashboard/oauth/authorize?${new URLSearchParams(params)}`, headers: { cookie: session.cookie } });
      expect(res.statusCode).toBe(303);
      const back = new URL(res.headers.location as string);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toMatch(/invalid_request|invalid_target/);
      expect(back.searchParams.get('error_description')).toMatch(description);
      expect(back.searchParams.get('state')).toBe('s');
    }
    const stray = await t.app.inject({ url: `/dashboard/oauth/authorize?${new URLSearchParams({ ...base, code_challenge_method: 'S256', redirect_uri: 'https://evil.example.com/cb' })}`, headers: { cookie: session.cookie } });
    expect(stray.statusCode).toBe(400);
    expect(stray.body).toContain('redirect_uri is not one this client registered');
  });

  it('sends the person to sign in first, and GET /oauth/authorize hands over to the consent page', async () => {
    const res = await t.app.inject({ url: '/oauth/authorize?client_id=x&state=1' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/dashboard/oauth/authorize?client_id=x&state=1');
    const page = await t.app.inject({ url: res.headers.location as string });
    expect(page.headers.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent('/dashboard/oauth/authorize?client_id=x&state=1')}`);
  });

  it('never grants a scope the signed-in key lacks, whatever the form sends (403, no code)', async () => {
    const clientId = (await register()).json().client_id as string;
    const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challengeOf(verifier()), code_challenge_method: 'S256' };
    const res = await consent(await signIn(key), params, { scopes: ['memories:read', 'secrets:read'] });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('cannot grant scopes it does not hold: secrets:read');
    const denied = await consent(await signIn(key), params, { scopes: ['memories:read'], decision: 'deny' });
    expect(new URL(denied.headers.location as string).searchParams.get('error')).toBe('access_denied');
  });

  it('exchanges a code once, with the right verifier and redirect URI only; a second use revokes what the first gave', async () => {
    const a = await authorized();
    for (const [extra, description] of [
      [{ code_verifier: verifier() }, /code_verifier does not match/],
      [{ redirect_uri: 'http://127.0.0.1:9/other' }, /redirect_uri does not match/],
      [{ client_id: 'mcl_unknown' }, /Unknown client_id/],
    ] as const) {
      const res = await exchange(a, extra);
      expect(res.statusCode).toBe(extra.client_id ? 401 : 400);
      expect(res.json().error_description).toMatch(description);
    }
    const first = await exchange(a);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const tokens = first.json();
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'memories:read' });
    const caller = await t.container.oauth.authenticate(tokens.access_token);
    expect([...caller.principal.scopes]).toEqual(['memories:read']);
    expect(caller.workspace).toBe('default');
    const mcp = (headers: Record<string, string>) => t.app.inject({
      method: 'POST', url: '/mcp', headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json, text/event-stream', ...headers },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect((await mcp({ 'x-workspace-id': 'other' })).json().error.data).toMatchObject({ message: 'This access token is for workspace default only' });
    const listed = await mcp({ 'x-workspace-id': 'default' });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).toContain('memory_search');
    const again = await exchange(a);
    expect(again.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/already used/) });
    await expect(t.container.oauth.authenticate(tokens.access_token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'Access token has been revoked' });
  });

  it('lets codes expire after a minute and access tokens after MNEMO_OAUTH_ACCESS_TTL_SECONDS', async () => {
    const late = await authorized();
    clock.advance(61_000);
    expect((await exchange(late)).json().error_description).toBe('The authorization code has expired');
    const a = await authorized();
    const tokens = (await exchange(a)).json();
    clock.advance(599_000);
    await t.container.oauth.authenticate(tokens.access_token);
    clock.advance(1_000);
    await expect(t.container.oauth.authenticate(tokens.access_token)).rejects.toMatchObject({ message: 'Access token has expired' });
  });

  it('rotates refresh tokens; presenting a spent one revokes the grant and is audited', async () => {
    const a = await authorized();
    const first = (await exchange(a)).json();
    const refreshed = await token({ grant_type: 'refresh_token', client_id: a.clientId, refresh_token: first.refresh_token });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const second = refreshed.json();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    await t.container.oauth.authenticate(second.access_token);
    const widen = await token({ grant_type: 'refresh_token', client_id: a.clientId, refresh_token: second.refresh_token, scope: 'memories:write' });
    expect(widen.json().error).toBe('invalid_scope');
    const reuse = await token({ grant_type: 'refresh_token', client_id: a.clientId, refresh_token: first.refresh_token });
    expect(reuse.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/already used/) });
    await expect(t.container.oauth.authenticate(second.access_token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await token({ grant_type: 'refresh_token', client_id: a.clientId, refresh_token: second.refresh_token })).json().error).toBe('invalid_grant');
    const owner = { tenantId: t.tenant, mode: 'live' as const };
    const rows = (await t.container.audit.list(owner, { action: 'oauth.*' }, { limit: 50, cursor: null })).items;
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['oauth.grant', 'oauth.refresh_reuse', 'oauth.code_reuse']));
  });

  it('revokes through RFC 7009 (an unknown token is no error) and when the granting key is revoked', async () => {
    const a = await authorized();
    const tokens = (await exchange(a)).json();
    const revoke = (fields: Record<string, string>) => t.app.inject({ method: 'POST', url: '/oauth/revoke', ...form(fields) });
    expect((await revoke({ client_id: a.clientId, token: 'mnemo_ort_nothing' })).statusCode).toBe(200);
    expect((await revoke({ client_id: a.clientId, token: tokens.refresh_token })).statusCode).toBe(200);
    await expect(t.container.oauth.authenticate(tokens.access_token)).rejects.toMatchObject({ message: 'Access token has been revoked' });

    const alice = await t.container.apiKeys.authenticate(key);
    const other = await t.key({ user: 'bob', scopes: ['memories:read'] });
    key = other;
    const b = await authorized();
    const bobs = (await exchange(b)).json();
    const bobsGrant = (await t.container.oauth.authenticate(bobs.access_token)).grantId;
    expect((await t.container.oauth.listGrants(alice)).map((g) => g.id)).toContain(bobsGrant);
    await t.container.apiKeys.revoke((await t.container.apiKeys.authenticate(other)).keyId);
    await expect(t.container.oauth.authenticate(bobs.access_token)).rejects.toMatchObject({ message: /no longer works/ });
    expect((await t.container.oauth.listGrants(alice)).map((g) => g.id)).not.toContain(bobsGrant);
    expect((await token({ grant_type: 'refresh_token', client_id: b.clientId, refresh_token: bobs.refresh_token })).json().error).toBe('invalid_grant');
  });

  it('limits registrations per client address', async () => {
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < 25 && last?.statusCode !== 429; i++) last = await register();
    expect(last!.statusCode).toBe(429);
    expect(last!.json().error).toBe('temporarily_unavailable');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
  });
});
