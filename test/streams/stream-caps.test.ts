import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openStream, openWs, sleep, startLiveApp, type LiveApp, type SseClient, type WsClient } from './support.ts';

/**
 * The per-tenant and per-process stream caps (MNEMO_MAX_STREAMS_PER_TENANT, MNEMO_MAX_STREAMS), shared by G8 SSE,
 * G4 live search and the G7 analytics socket, each refusal answered in its surface's way and naming the cap.
 */
describe('stream caps per tenant and per process', () => {
  let t: LiveApp;
  const open: (SseClient | WsClient)[] = [];
  beforeAll(async () => {
    t = await startLiveApp({}, { MNEMO_MAX_STREAMS_PER_TENANT: '3', MNEMO_MAX_STREAMS: '5' });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  /** Waits until the registry holds `n` streams (a socket's slot is taken after its authentication). */
  async function held(n: number): Promise<void> {
    for (let i = 0; i < 200 && t.container.streams.size !== n; i++) await sleep(5);
    expect(t.container.streams.size).toBe(n);
  }
  const sse = async (key: string) => {
    const s = await openStream(`${t.url}/api/v1/stream`, bearer(key));
    open.push(s);
    return s;
  };
  const ws = async (path: string, key: string) => {
    const s = await openWs(`${t.wsUrl}${path}`, bearer(key));
    open.push(s);
    return s;
  };
  const refusedSse = async (key: string) => {
    const s = await sse(key);
    expect(s.status).toBe(200);
    const error = await s.waitFor((f) => f.event === 'error');
    await s.ended;
    return error.data;
  };
  const refusedWs = async (path: string, key: string) => {
    const s = await ws(path, key);
    expect(await s.closed).toMatchObject({ code: 1013 });
    return s.messages[0];
  };

  it('refuses a tenant\'s streams past its cap, whatever the key and the surface', async () => {
    const [a1, a2] = [await t.key({ tenant: 'acme' }), await t.key({ tenant: 'acme' })];
    await sse(a1);
    await sse(a1);
    await ws('/v1/search/live', a2);
    await held(3);

    // A fresh key of the tenant, far below the per-key cap of 5: refused for the tenant on every surface.
    const perTenant = { code: 'RATE_LIMITED', message: expect.stringMatching(/at most 3 concurrent streams per tenant/), retry_after: 60000 };
    expect(await refusedSse(await t.key({ tenant: 'acme' }))).toEqual(perTenant);
    expect(await refusedWs('/v1/search/live', a2)).toEqual({ type: 'error', ...perTenant });
    expect(await refusedWs('/api/v1/analytics/stream', a1)).toEqual({ type: 'error', ...perTenant });
    await held(3);
  });

  it('refuses every tenant once the process holds its cap, and frees a slot when a stream ends', async () => {
    const g = await t.key({ tenant: 'globex' });
    const live = await ws('/v1/search/live', g);
    await ws('/api/v1/analytics/stream', g);
    await held(5);

    const initech = await t.key({ tenant: 'initech' });
    const perProcess = { code: 'RATE_LIMITED', message: expect.stringMatching(/this server holds at most 5 concurrent streams/), retry_after: 60000 };
    expect(await refusedSse(initech)).toEqual(perProcess);
    expect(await refusedWs('/v1/search/live', initech)).toEqual({ type: 'error', ...perProcess });
    expect(await refusedWs('/api/v1/analytics/stream', initech)).toEqual({ type: 'error', ...perProcess });

    live.close();
    await held(4);
    const admitted = await sse(initech);
    await admitted.waitFor((f) => f.retry !== undefined || f.comment !== undefined || f.event !== undefined);
    expect(admitted.events('error')).toEqual([]);
    await held(5);
  });
});
