import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { uniqueTenant } from '../support/test-app.ts';
import { bearer, g1Http, openStream, sleep, startLiveApp, until, type LiveApp, type SseClient } from '../streams/support.ts';


describe('G8 event stream: security and limits', () => {
  let t: LiveApp | undefined;
  const streams: SseClient[] = [];
  // Tests with the default settings share one listening app (a fresh tenant each); the others start their own.
  let shared: LiveApp | undefined;
  const sharedLiveApp = async (): Promise<LiveApp> => {
    shared ??= await startLiveApp();
    await shared.freshTenant();
    return shared;
  };
  afterAll(async () => { await shared?.close(); });
  const open = async (app: LiveApp, query: string, key: string, headers: Record<string, string> = {}) => {
    const s = await openStream(`${app.url}/api/v1/stream${query}`, { ...bearer(key), ...headers });
    streams.push(s);
    expect(s.status).toBe(200);
    return s;
  };
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    if (t !== shared) await t?.close();
    t = undefined;
  });

  it('never sends events of another tenant, another workspace or the other mode', async () => {
    t = await sharedLiveApp();
    const globex = uniqueTenant('globex');
    const key = await t.key();
    const s = await open(t, '', key, { 'x-workspace-id': 'team-a' });
    const other = await open(t, '', await t.key({ tenant: globex }), { 'x-workspace-id': 'team-a' });
    await g1Http(t.url, await t.key({ tenant: globex }), { 'x-workspace-id': 'team-a' }).create({ title: 'g', content: 'other tenant' });
    await g1Http(t.url, key, { 'x-workspace-id': 'team-b' }).create({ title: 'w', content: 'other workspace' });
    await g1Http(t.url, await t.key({ tenant: t.tenant, mode: 'test' }), { 'x-workspace-id': 'team-a' }).create({ title: 't', content: 'test mode' });
    await g1Http(t.url, await t.key({ tenant: t.tenant, mode: 'test' }), { 'x-workspace-id': 'team-a' }).search({ query: 'test mode' });
    const marker = await g1Http(t.url, key, { 'x-workspace-id': 'team-a' }).create({ title: 'mine', content: 'in scope' });
    await s.waitFor((f) => f.event === 'memory.created' && f.data?.id === marker.id);
    await other.waitFor((f) => f.event === 'memory.created');

    const memoryFrames = s.events().filter((f) => f.event!.startsWith('memory.') || f.event === 'embedding.generated' || f.event === 'search.performed');
    expect(memoryFrames.every((f) => f.data!.id === marker.id || f.data!.memory_id === marker.id)).toBe(true);
    expect(s.events().filter((f) => f.data?.workspace !== undefined).every((f) => f.data!.workspace === 'team-a')).toBe(true);
    expect(s.text()).not.toContain('other tenant');
    expect(s.text()).not.toContain('other workspace');
    expect(s.text()).not.toContain('test mode');
    // The other tenant saw its own memory only.
    expect(other.text()).not.toContain('in scope');
  });

  it('does not resume from another tenant\'s event id (treated as unknown) and replays nothing of theirs', async () => {
    t = await sharedLiveApp();
    const globex = uniqueTenant('globex');
    const theirs = g1Http(t.url, await t.key({ tenant: globex }));
    const watcher = await open(t, '?events=memory.created', await t.key({ tenant: globex }));
    await theirs.create({ title: 'secret', content: 'globex plans' });
    const frame = await watcher.waitFor((f) => f.event === 'memory.created');
    await theirs.create({ title: 'secret 2', content: 'more globex plans' });

    const s = await open(t, '?events=memory.created', await t.key(), { 'last-event-id': frame.id! });
    await s.waitFor((f) => f.comment === 'last-event-id not found; resuming from now');
    // Positive control: an event of acme's own, written after globex's, arrives; events come in order, so globex's
    // would have come first.
    const own = await g1Http(t.url, await t.key()).create({ title: 'own', content: 'acme note' });
    await s.waitFor((f) => f.event === 'memory.created' && f.data?.id === own.id);
    expect(s.events().map((f) => f.data!.id)).toEqual([own.id]);
    expect(s.text()).not.toContain('globex');
  });

  it('answers the 6th concurrent connection of a key with RATE_LIMITED and closes it; other keys are not affected', async () => {
    // Its own app: it counts the server's open streams.
    t = await startLiveApp();
    const key = await t.key();
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await open(t, '?events=memory.deleted', key));
    const sixth = await open(t, '?events=memory.deleted', key);
    const err = await sixth.waitFor((f) => f.event === 'error');
    expect(err.data).toEqual({ code: 'RATE_LIMITED', message: expect.stringContaining('5'), retry_after: 60000 });
    await sixth.ended;
    expect(sixth.events().map((f) => f.event)).toEqual(['error']);

    // Another key of the same tenant has its own five: its stream is served, not refused (a delete arrives, no error).
    const otherKey = await open(t, '?events=memory.deleted', await t.key());
    const deleteOne = async () => {
      const api = g1Http(t!.url, key);
      const m = await api.create({ title: 'x', content: 'y' });
      await api.delete(m.id as string);
      return m.id as string;
    };
    const first = await deleteOne();
    await otherKey.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === first);
    expect(otherKey.events().map((f) => f.event)).toEqual(['memory.deleted']);

    // Closing one frees its slot (once the server has seen it close).
    five[0]!.close();
    await until(() => t!.container.streams.size === 5);
    const again = await open(t, '?events=memory.deleted', key);
    const second = await deleteOne();
    await again.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === second);
    expect(again.events().map((f) => f.event)).toEqual(['memory.deleted']);
    expect(t.container.streams.size).toBe(6);
  });

  it('closes a connection past the events-per-minute cap with RATE_LIMITED', async () => {
    t = await startLiveApp({ realtime: { maxEventsPerMinute: 3 } });
    const key = await t.key();
    const s = await open(t, '?events=memory.created', key);
    const api = g1Http(t.url, key);
    for (let i = 0; i < 5; i++) await api.create({ title: `m${i}`, content: `content ${i}` });
    const err = await s.waitFor((f) => f.event === 'error');
    await s.ended;
    expect(s.events().map((f) => f.event)).toEqual(['memory.created', 'memory.created', 'memory.created', 'error']);
    expect(err.data).toEqual({ code: 'RATE_LIMITED', message: expect.stringContaining('3 per minute'), retry_after: 60000 });
  });

  it('sends AUTH_ERROR (retry_after 0) and closes when the key is revoked while the stream is open', async () => {
    t = await startLiveApp({ realtime: { timeUnitMs: 10, keyCheckSeconds: 5 } });
    const { record, key } = await t.container.apiKeys.create({ tenantId: 'acme', userId: 'u1', tier: 'pro', mode: 'live' });
    const s = await open(t, '?events=memory.created', key);
    // Time passing is the point here: several re-checks (every 50 ms) of the still valid key close nothing. The
    // positive control shows the stream alive after them: a memory written now arrives, and nothing came before it.
    await sleep(80);
    const alive = await g1Http(t.url, key).create({ title: 'alive', content: 'still open' });
    await s.waitFor((f) => f.event === 'memory.created' && f.data?.id === alive.id);
    // Heartbeats may come between (they are the stream staying open); no other frame may.
    expect(s.events().map((f) => f.event).filter((e) => e !== 'heartbeat')).toEqual(['memory.created']);
    await t.container.apiKeys.revoke(record.id);
    const err = await s.waitFor((f) => f.event === 'error', 3000);
    expect(err.data).toEqual({ code: 'AUTH_ERROR', message: expect.any(String), retry_after: 0 });
    await s.ended;
    // And the revoked key cannot open a new stream: a plain JSON 401.
    const again = await openStream(`${t.url}/api/v1/stream`, bearer(key));
    expect(again.status).toBe(401);
    expect(JSON.parse(await again.body())).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
  });

  it('checks the key before sending events: a revoked key gets AUTH_ERROR instead of the next event', async () => {
    // Key re-checks on a timer are effectively off here (1000 units apart): only the check before sending acts.
    t = await startLiveApp({ realtime: { keyCheckSeconds: 1000 } });
    const { record, key } = await t.container.apiKeys.create({ tenantId: 'acme', userId: 'u1', tier: 'pro', mode: 'live' });
    const s = await open(t, '?events=memory.created', key);
    await t.container.apiKeys.revoke(record.id);
    await g1Http(t.url, await t.key({ tenant: 'acme' })).create({ title: 'after', content: 'revocation' });
    const err = await s.waitFor((f) => f.event === 'error');
    expect(err.data).toMatchObject({ code: 'AUTH_ERROR', retry_after: 0 });
    expect(s.events('memory.created')).toEqual([]);
  });

  it('sends CONNECTION_ERROR (retry_after 5000) to every open stream when the server closes', async () => {
    const app = await startLiveApp();
    const a = await open(app, '?events=memory.created', await app.key());
    const b = await open(app, '', await app.key({ tenant: 'globex' }));
    await app.close();
    for (const s of [a, b]) {
      const err = await s.waitFor((f) => f.event === 'error');
      expect(err.data).toEqual({ code: 'CONNECTION_ERROR', message: expect.any(String), retry_after: 5000 });
      await s.ended;
    }
  });
});
