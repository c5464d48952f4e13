import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { bearer, g1Http, openWs, startLiveApp, type LiveApp, type WsClient } from './support.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('G7 WebSocket /api/v1/analytics/stream', () => {
  let t: LiveApp;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.close();
    await t.close();
  });
  const connect = async (query: string, headers: Record<string, string>) => {
    const ws = await openWs(`${t.wsUrl}/api/v1/analytics/stream${query}`, headers);
    sockets.push(ws);
    return ws;
  };

  it('sends the summary at once and again after each interval (counted in the injected time unit)', async () => {
    // A still clock: every write falls inside the summary's window however slow the machine is.
    const clock = new ManualClock(Date.UTC(2026, 4, 1, 12));
    t = await startLiveApp({ realtime: { timeUnitMs: 50 }, clock });
    const key = await t.key({ tenant: 'acme' });
    const api = g1Http(t.url, key);
    const m = await api.create({ title: 'a', content: 'alpha' });
    await g1Http(t.url, key, { 'x-workspace-id': 'other' }).create({ title: 'b', content: 'beta' });
    await api.update(m.id as string, { content: 'alpha two' });
    await api.search({ query: 'alpha' });
    await api.search({ query: 'beta' });
    await g1Http(t.url, await t.key({ tenant: 'globex' })).create({ title: 'g', content: 'not ours' });
    clock.advance(1000);

    const opened = Date.now();
    const ws = await connect('?interval=2', bearer(key));
    const first = await ws.waitFor((msg) => msg.type === 'analytics');
    expect(first).toEqual({
      type: 'analytics', timestamp: expect.stringMatching(ISO), interval: 2, sequence: 1,
      data: {
        total_memories: 2,
        memory_operations: { creates: 2, updates: 1, deletes: 0, total: 3 },
        searches: 2,
        avg_search_time_ms: expect.any(Number),
        window: { start: expect.stringMatching(ISO), end: expect.stringMatching(ISO), seconds: 2 },
      },
    });
    expect(first.data.avg_search_time_ms).toBeGreaterThan(0);
    expect(Date.parse(first.data.window.end) - Date.parse(first.data.window.start)).toBe(2000);

    await api.delete(m.id as string);
    clock.advance(10);
    const second = await ws.waitFor((msg) => msg.type === 'analytics' && msg.data.memory_operations.deletes === 1, 3000);
    expect(second.sequence).toBeGreaterThanOrEqual(2);
    // 2 units of 50 ms.
    expect(Date.now() - opened).toBeGreaterThanOrEqual(90);
    expect(second.data).toMatchObject({ total_memories: 1, memory_operations: { deletes: 1 } });
  });

  it('defaults to 10 seconds, refuses bad intervals and bad keys', async () => {
    t = await startLiveApp();
    const key = await t.key();
    const ws = await connect('', bearer(key));
    expect(await ws.waitFor((m) => m.type === 'analytics')).toMatchObject({ interval: 10, data: { window: { seconds: 10 } } });

    for (const bad of ['?interval=0', '?interval=abc', '?interval=99999']) {
      const refused = await connect(bad, bearer(key));
      expect(await refused.closed).toMatchObject({ code: 1008 });
      expect(refused.messages[0]).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    }
    const anonymous = await connect('', {});
    expect(await anonymous.closed).toMatchObject({ code: 1008 });
    expect(anonymous.messages[0]).toMatchObject({ type: 'error', code: 'UNAUTHORIZED' });
    const viaQuery = await connect(`?access_token=${key}&interval=1`, {});
    await viaQuery.waitFor((m) => m.type === 'analytics');
  });

  it('answers a plain GET with 426 in the G7 envelope', async () => {
    t = await startLiveApp();
    const res = await fetch(`${t.url}/api/v1/analytics/stream`, { headers: bearer(await t.key()) });
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'UPGRADE_REQUIRED' }, metadata: { request_id: expect.any(String) } });
  });
});
