import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_RULE } from '../../src/core/scope.ts';
import { bearer, openWs, startLiveApp, type LiveApp } from '../streams/support.ts';

/** Every route that reads X-Workspace-ID, with a request that is valid but for the workspace. */
const ROUTES: [surface: string, method: 'GET' | 'POST', url: string, body?: object, headers?: Record<string, string>][] = [
  ['G1', 'GET', '/api/v1/memories'],
  ['G1 topics', 'GET', '/api/v1/topics'],
  ['G2', 'POST', '/api/v1/memory', { text: 'note' }],
  ['G3', 'POST', '/api/v1/search', { query: 'deploy' }],
  ['G4', 'GET', '/v1/search?q=deploy'],
  ['G4 stream', 'GET', '/v1/search/stream?q=deploy', undefined, { accept: 'text/event-stream' }],
  ['G6', 'POST', '/api/v1/batch', { operations: [{ type: 'search', data: { query: 'deploy' } }] }],
  ['G8', 'GET', '/api/v1/stream', undefined, { accept: 'text/event-stream' }],
  ['G9', 'GET', '/api/v1/webhooks'],
];

describe('X-Workspace-ID: one resolver, one message, each surface\'s envelope', () => {
  let t: LiveApp;
  let key: string;
  beforeAll(async () => {
    t = await startLiveApp();
    key = await t.key();
  });
  afterAll(() => t.close());

  const call = (workspace: string, [, method, url, body, headers]: (typeof ROUTES)[number]) => t.app.inject({
    method, url, headers: { ...bearer(key), 'x-workspace-id': workspace, ...headers }, ...(body ? { payload: body } : {}),
  });

  it('refuses a bad workspace with a 400 naming the header and the same rule on every surface', async () => {
    for (const route of ROUTES) {
      const res = await call('../etc', route);
      expect(res.statusCode, `${route[0]}: ${res.body}`).toBe(400);
      expect(res.headers['content-type'], route[0]).toMatch(/^application\/json/);
      expect(res.body, route[0]).toContain('X-Workspace-ID');
      expect(res.body, route[0]).toContain(WORKSPACE_RULE);
    }
  });

  it('takes a good one everywhere (positive control)', async () => {
    for (const route of ROUTES.filter(([surface]) => !surface.includes('stream') && surface !== 'G8')) {
      const res = await call('team-a', route);
      expect(res.statusCode, `${route[0]}: ${res.body}`).toBeLessThan(300);
    }
  });

  it('says the same on the live-search WebSocket, for the header and for ?workspace=', async () => {
    for (const [query, headers, field] of [
      ['', { 'x-workspace-id': '../etc' }, 'X-Workspace-ID'],
      ['?workspace=a%20b', {}, 'workspace'],
    ] as const) {
      const ws = await openWs(`${t.wsUrl}/v1/search/live${query}`, { ...bearer(key), ...headers });
      expect(await ws.closed).toMatchObject({ code: 1008 });
      expect(ws.messages).toEqual([{ type: 'error', code: 'VALIDATION_ERROR', message: `Invalid workspace id: ${field} ${WORKSPACE_RULE}` }]);
    }
    const good = await openWs(`${t.wsUrl}/v1/search/live?workspace=team-a`, bearer(key));
    good.send({ type: 'subscribe', query: 'deploy' });
    expect(await good.waitFor((m) => m.type === 'subscribed')).toMatchObject({ query: 'deploy' });
    good.close();
  });
});
