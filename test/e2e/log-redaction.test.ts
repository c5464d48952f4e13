import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer } from '../../src/app/container.ts';
import { bearer, openWs, type WsClient } from '../streams/support.ts';
import { npmStart, type StartedServer } from '../support/npm-start.ts';


/** Every character percent-encoded: the query parser decodes it back to the key, so it authenticates. */
const percentEncoded = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('no API key reaches the log, in any spelling that authenticates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-log-'));
  let server: StartedServer;
  let key: string;
  let log: string;

  beforeAll(async () => {
    const env = { MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', HOST: '127.0.0.1', PORT: '0', MNEMO_LOG_LEVEL: 'trace' };
    const container = await createContainer(loadConfig(env));
    key = (await container.apiKeys.create({ tenantId: 'acme', userId: 'ann', tier: 'enterprise', mode: 'live' })).key;
    await container.close();
    server = await npmStart(env);

    const http = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, { ...init, headers });
    const ws = (path: string, headers: Record<string, string> = {}) => openWs(`${server.url.replace('http', 'ws')}${path}`, headers);
    const subscribed = async (client: WsClient) => {
      client.send({ type: 'subscribe', query: 'anything' });
      await client.waitFor((m) => m.type === 'subscribed');
      client.close();
      await client.closed;
    };
    const refused = async (client: WsClient) => expect((await client.closed).code).toBe(1008);

    // HTTP: both headers on every surface, accepted, and a forged one refused.
    expect((await http('/api/v1/memories', { 'x-api-key': key })).status).toBe(200);
    expect((await http('/api/v1/memory/health-probe', bearer(key))).status).toBe(404);
    expect((await http('/api/v1/memory', { ...bearer(key), 'content-type': 'application/json' }, { method: 'POST', body: '{"text":' })).status).toBe(400);
    expect((await http('/api/v1/memories', { authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await http('/v1/search?q=probe', { 'x-api-key': key })).status).toBe(200);
    // Forged: the last character changed (a key may end in any letter, so never to the one it has).
    expect((await http('/api/v1/memories', { 'x-api-key': key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x') })).status).toBe(401);
    expect((await http('/api/v1/memories', { 'x-api-key': key, cookie: `session=${key}` })).status).toBe(200);
    // HTTP: the key in a query string, on known and unknown paths, and in a URL the router cannot decode.
    for (const query of [`access_token=${key}`, `access%5Ftoken=${key}`, `ACCESS_TOKEN=${key}`, `api_key=${key}`, `apikey=${key}`, `x=1&access_token=${percentEncoded(key)}`]) {
      expect((await http(`/api/v1/memories?${query}`)).status, query).toBe(401);
      expect((await http(`/no/such/path?${query}`)).status, query).toBe(404);
      expect((await http(`/api/v1/memories/a/b?${query}`)).status, query).toBe(404);
    }
    expect((await http(`/api/v1/memories/%E0%A4%A?access_token=${key}`)).status).toBe(400);
    expect((await http(`/v1/search/live?access_token=${key}`)).status).toBe(426);

    // WebSockets: every spelling that authenticates, then ones that fail.
    await subscribed(await ws(`/v1/search/live?access_token=${key}`));
    await subscribed(await ws(`/v1/search/live?access%5Ftoken=${key}`));
    await subscribed(await ws(`/v1/search/live?access_token=${percentEncoded(key)}`));
    await subscribed(await ws(`/v1/search/live?%61ccess_token=${encodeURIComponent(key)}&x=1`));
    await subscribed(await ws(`/v1/search/live?x=%26&access%5Ftoken=${percentEncoded(key)}`));
    await subscribed(await ws('/v1/search/live', bearer(key)));
    await refused(await ws(`/v1/search/live?access_token=${key}&access_token=${key}`));
    await refused(await ws(`/v1/search/live?ACCESS_TOKEN=${key}`));
    await refused(await ws('/v1/search/live', { authorization: `Basic ${key}` }));
    const analytics = await ws(`/api/v1/analytics/stream?access%5Ftoken=${key}`);
    analytics.close();
    await analytics.closed;

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    log = server.output();
  }, 90_000);

  afterAll(() => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('records the requests (positive control)', () => {
    const urls = log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; req?: { url: string } })
      .filter((l) => l.msg === 'incoming request').map((l) => l.req!.url);
    expect(urls.length).toBeGreaterThanOrEqual(32);
    expect(urls).toContain('/api/v1/memories?access_token=[redacted]');
    expect(urls).toContain('/v1/search/live?access%5Ftoken=[redacted]');
    expect(urls).toContain('/no/such/path?ACCESS_TOKEN=[redacted]');
    expect(urls).toContain('/v1/search/live?%61ccess_token=[redacted]&x=1');
    expect(urls).toContain('/v1/search/live?x=%26&access%5Ftoken=[redacted]');
    expect(urls.filter((u) => u.startsWith('/v1/search/live'))).toHaveLength(10);
    expect(log).toMatch(/"statusCode":101|"statusCode":426/);
  });

  it('holds the key text in no spelling', () => {
    const secret = key.slice('mnemo_live_'.length);
    for (const spelling of [key, secret, percentEncoded(key), percentEncoded(secret), encodeURIComponent(key)]) {
      expect(log.includes(spelling), spelling.slice(0, 20)).toBe(false);
    }
  });
});
