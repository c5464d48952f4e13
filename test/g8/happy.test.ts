import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { uniqueTenant, type Json } from '../support/test-app.ts';
import { testStoreKind } from '../support/test-store.ts';
import { bearer, g1Http, openStream, startLiveApp, type LiveApp, type SseClient } from '../streams/support.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MEMORY_EVENTS = 'memory.created,memory.updated,memory.deleted';

describe('G8 event stream: happy paths', () => {
  let t: LiveApp;
  const streams: SseClient[] = [];
  // Tests with the default settings share one listening app (a fresh tenant each); the others start their own.
  let shared: LiveApp | undefined;
  const sharedLiveApp = async (): Promise<LiveApp> => {
    shared ??= await startLiveApp();
    await shared.freshTenant();
    return shared;
  };
  afterAll(async () => { await shared?.close(); });
  const open = async (query: string, key: string, headers: Record<string, string> = {}) => {
    const s = await openStream(`${t.url}/api/v1/stream${query}`, { ...bearer(key), ...headers });
    streams.push(s);
    expect(s.status).toBe(200);
    return s;
  };
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    if (t !== shared) await t.close();
  });

  it('sends memory.created, memory.updated and memory.deleted frames (event, id, data) for G1 writes', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const s = await open(`?events=${MEMORY_EVENTS}`, key);
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(s.headers['cache-control']).toContain('no-cache');
    expect(s.headers['x-connection-id']).toMatch(/^conn_[A-Za-z0-9]{20}$/);

    const api = g1Http(t.url, key);
    const m = await api.create({ title: 'Deploy notes', content: 'Use blue/green', tags: ['ops'], metadata: { env: 'prod' } });
    await api.update(m.id as string, { content: 'Use canary releases' });
    await api.delete(m.id as string);
    await s.waitFor((f) => f.event === 'memory.deleted');

    const frames = s.events();
    expect(frames.map((f) => f.event)).toEqual(['memory.created', 'memory.updated', 'memory.deleted']);
    // Each frame is exactly `event:`, `id:`, `data:` lines and a blank line; the id is the event id.
    for (const f of frames) {
      expect(s.text()).toContain(`event: ${f.event}\nid: ${f.id}\ndata: ${f.rawData}\n\n`);
      expect(f.id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
      // data is exactly the stored event's payload; the memory was deleted since, so its earlier events keep its id only.
      const stored = await t.container.storage.events.findById(f.id!);
      expect(stored?.type).toBe(f.event);
      if (f.event === 'memory.deleted') expect(f.data).toEqual(stored?.data);
      else expect(stored?.data).toMatchObject({ id: m.id, forgotten: true });
      expect(JSON.stringify(stored?.data)).not.toContain('canary');
    }
    const [created, updated, deleted] = frames.map((f) => f.data as Json);
    expect(created).toMatchObject({ id: m.id, content: 'Use blue/green', tags: ['ops'], metadata: { env: 'prod' }, created_by: 'user-1' });
    expect(created!.created_at).toMatch(ISO);
    expect(updated).toMatchObject({ id: m.id, content: 'Use canary releases', updated_by: 'user-1', changes: { content: true, metadata: false, tags: false } });
    expect(updated!.updated_at).toMatch(ISO);
    expect(deleted).toMatchObject({ id: m.id, deleted_by: 'user-1', reason: 'user_request' });
    expect(deleted!.deleted_at).toMatch(ISO);
  });

  it('sends only the requested types: comma-separated and repeated `events` parameters', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const onlyDeletes = await open('?events=memory.deleted', key);
    const repeated = await open('?events=memory.created&events=search.performed', key);
    const everything = await open('', key);
    const api = g1Http(t.url, key);
    const m = await api.create({ title: 'Cats', content: 'The cat sat on the mat' });
    await api.search({ query: 'cat on a mat' });
    await api.delete(m.id as string);
    await onlyDeletes.waitFor((f) => f.event === 'memory.deleted');
    await repeated.waitFor((f) => f.event === 'search.performed');
    await everything.waitFor((f) => f.event === 'memory.deleted');
    // search.performed is written in the search recorder's next batch (up to 100 ms later), so it may follow the delete.
    await everything.waitFor((f) => f.event === 'search.performed');

    expect(onlyDeletes.events().map((f) => f.event)).toEqual(['memory.deleted']);
    expect(repeated.events().map((f) => f.event)).toEqual(['memory.created', 'search.performed']);
    expect(repeated.events('search.performed')[0]!.data).toMatchObject({ query: 'cat on a mat', user_id: 'user-1', results_count: 1 });
    // No `events`: every memory-surface type (embedding.generated included).
    expect(everything.events().map((f) => f.event)).toEqual(
      expect.arrayContaining(['memory.created', 'embedding.generated', 'search.performed', 'memory.deleted']));
  });

  it('applies filters[tags], filters[memory_type] and metadata filters to memory events', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const byTag = await open(`?events=${MEMORY_EVENTS}&filters[tags]=ops,infra`, key);
    const byType = await open(`?events=memory.created&filters%5Bmemory_type%5D=project`, key);
    const byMeta = await open(`?events=${MEMORY_EVENTS}&filters[env]=prod&filters[team.name]=web`, key);
    const api = g1Http(t.url, key);
    const a = await api.create({ title: 'A', content: 'a', tags: ['ops'], memory_type: 'project', metadata: { env: 'prod', team: { name: 'web' } } });
    const b = await api.create({ title: 'B', content: 'b', tags: ['infra', 'x'], metadata: { env: 'dev' } });
    const c = await api.create({ title: 'C', content: 'c', tags: ['food'], metadata: { env: 'prod', team: { name: 'ops' } } });
    const d = await api.create({ title: 'D', content: 'd', memory_type: 'project', metadata: { env: 'prod', team: { name: 'web' } } });
    await api.delete(b.id as string);
    // A marker that every stream lets through, so that the absence of the others is settled.
    const marker = await api.create({ title: 'M', content: 'm', tags: ['ops'], memory_type: 'project', metadata: { env: 'prod', team: { name: 'web' } } });
    for (const s of [byTag, byType, byMeta]) await s.waitFor((f) => f.data?.id === marker.id);

    const ids = (s: SseClient) => s.events().map((f) => `${f.event}:${f.data!.id}`);
    // The stored memory.deleted keeps the id only (forgetting): a tag filter has nothing to pass it on.
    expect(ids(byTag)).toEqual([`memory.created:${a.id}`, `memory.created:${b.id}`, `memory.created:${marker.id}`]);
    expect(ids(byType)).toEqual([`memory.created:${a.id}`, `memory.created:${d.id}`, `memory.created:${marker.id}`]);
    expect(ids(byMeta)).toEqual([`memory.created:${a.id}`, `memory.created:${d.id}`, `memory.created:${marker.id}`]);
    expect(c.id).toBeDefined();
  });

  // Time passing is the point (about a second of it), and no store is involved: a timer and the connection. In
  // `suite` only: the same in the `postgres` project.
  it.runIf(testStoreKind() === 'sqlite')('sends heartbeats at the interval, counted in the injected time unit, never below 30 units', async () => {
    t = await startLiveApp({ realtime: { timeUnitMs: 10 } });
    const key = await t.key();
    const opened = Date.now();
    // heartbeat=1 is raised to the 30-unit minimum: 300 ms here.
    const s = await open('?heartbeat=1&events=memory.deleted', key);
    const first = await s.waitFor((f) => f.event === 'heartbeat', 3000);
    const firstAt = Date.now();
    const second = await s.waitFor((f) => f.event === 'heartbeat' && f.id !== first.id, 3000);
    const secondAt = Date.now();
    expect(firstAt - opened).toBeGreaterThanOrEqual(280);
    expect(secondAt - firstAt).toBeGreaterThanOrEqual(200);
    expect(first.id).toBe('heartbeat_1');
    expect(second.id).toBe('heartbeat_2');
    expect(first.data).toEqual({ timestamp: expect.stringMatching(ISO), status: 'ok', connection_id: s.headers['x-connection-id'] });

    // A longer interval is kept as asked: 45 units = 450 ms.
    const slowOpened = Date.now();
    const slow = await open('?heartbeat=45&events=memory.deleted', key);
    await slow.waitFor((f) => f.event === 'heartbeat', 3000);
    expect(Date.now() - slowOpened).toBeGreaterThanOrEqual(440);
  });

  it('resumes after Last-Event-ID with nothing missed and nothing twice while writes go on', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const api = g1Http(t.url, key);
    const created: string[] = [];
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) created.push((await api.create({ title: `m${created.length}`, content: `memory number ${created.length}` })).id as string);
    };
    const first = await open('?events=memory.created', key);
    await write(3);
    await first.waitFor((f) => f.data?.id === created[2]);
    const lastId = first.events().at(-1)!.id!;
    first.close();

    // Written while nobody listens, then while the client reconnects and replays.
    await write(4);
    const during = write(6);
    const second = await open('?events=memory.created', key, { 'last-event-id': lastId });
    await during;
    await write(2);
    await second.waitFor((f) => f.data?.id === created.at(-1));

    const seen = [...first.events(), ...second.events()].map((f) => f.data!.id as string);
    expect(seen).toEqual(created);
    expect(new Set(second.events().map((f) => f.id)).size).toBe(second.events().length);
  });

  it('resumes from a heartbeat id carrying the last event, and from last_event_id in the query', async () => {
    t = await startLiveApp({ realtime: { timeUnitMs: 5 } });
    const key = await t.key();
    const api = g1Http(t.url, key);
    const s = await open('?events=memory.created', key);
    const a = await api.create({ title: 'a', content: 'first' });
    const aFrame = await s.waitFor((f) => f.data?.id === a.id);
    const hb = await s.waitFor((f) => f.event === 'heartbeat' && (f.id ?? '').endsWith(aFrame.id!), 3000);
    expect(hb.id).toMatch(/^heartbeat_\d+_evt_/);
    s.close();
    const b = await api.create({ title: 'b', content: 'second' });

    const again = await open('?events=memory.created', key, { 'last-event-id': hb.id! });
    await again.waitFor((f) => f.data?.id === b.id);
    expect(again.events('memory.created').map((f) => f.data!.id)).toEqual([b.id]);

    const viaQuery = await open(`?events=memory.created&last_event_id=${aFrame.id}`, key);
    await viaQuery.waitFor((f) => f.data?.id === b.id);
    expect(viaQuery.events('memory.created').map((f) => f.data!.id)).toEqual([b.id]);
  });

  it('starts live with a comment when Last-Event-ID is unknown', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const api = g1Http(t.url, key);
    await api.create({ title: 'old', content: 'before' });
    const s = await open('?events=memory.created', key, { 'last-event-id': 'evt_doesnotexist000000000000' });
    await s.waitFor((f) => f.comment === 'last-event-id not found; resuming from now');
    const fresh = await api.create({ title: 'new', content: 'after' });
    await s.waitFor((f) => f.data?.id === fresh.id);
    expect(s.events().map((f) => f.data!.id)).toEqual([fresh.id]);
  });

  it('delivers system.health to every tenant that asked for it, with its fields', async () => {
    t = await startLiveApp({ realtime: { healthIntervalMs: 40 } });
    const a = await open('?events=system.health', await t.key({ tenant: 'acme' }));
    const b = await open('?events=system.health&filters[tags]=x', await t.key({ tenant: 'globex', mode: 'test' }));
    const notAsked = await open('?events=memory.created', await t.key({ tenant: 'acme' }));
    t.container.periodic.start();
    try {
      const frame = await a.waitFor((f) => f.event === 'system.health', 3000);
      await b.waitFor((f) => f.event === 'system.health', 3000);
      expect(frame.id).toMatch(/^evt_/);
      expect(frame.data).toEqual({
        status: 'healthy',
        timestamp: expect.stringMatching(ISO),
        metrics: { cpu_usage: expect.any(Number), memory_usage: expect.any(Number), response_time: expect.any(Number), error_rate: expect.any(Number) },
        services: { api: 'up', database: 'up', search: 'up' },
      });
      expect(frame.data!.metrics.memory_usage).toBeGreaterThan(1);
      // Positive control: what the third stream did ask for arrives, after the health event it must not get.
      const m = await g1Http(t.url, await t.key({ tenant: 'acme' })).create({ title: 'x', content: 'y' });
      await notAsked.waitFor((f) => f.event === 'memory.created' && f.data?.id === m.id);
      expect(notAsked.events().map((f) => f.event)).toEqual(['memory.created']);
    } finally {
      await t.container.periodic.stop();
    }
  });

  it('delivers analytics.update to streams of the tenant and mode that were active', async () => {
    t = await sharedLiveApp();
    const key = await t.key();
    const globex = uniqueTenant('globex');
    const mine = await open('?events=analytics.update', key, { 'x-workspace-id': 'elsewhere' });
    const idle = await open('?events=analytics.update', await t.key({ tenant: globex }));
    const api = g1Http(t.url, key);
    const m = await api.create({ title: 'x', content: 'y' });
    await api.update(m.id as string, { title: 'z' });
    await api.search({ query: 'y' });
    await t.container.periodic.emitAnalytics();
    const frame = await mine.waitFor((f) => f.event === 'analytics.update');
    expect(frame.data).toMatchObject({
      total_memories: 1, memory_operations: { creates: 1, updates: 1, deletes: 0, total: 2 }, searches: 1,
      window: { start: expect.stringMatching(ISO), end: expect.stringMatching(ISO), seconds: 60 },
    });
    expect(frame.data!.avg_search_time_ms).toBeGreaterThan(0);
    // Positive control: once globex has been active, the next summary reaches its stream, and it is the first one there.
    await g1Http(t.url, await t.key({ tenant: globex })).search({ query: 'y' });
    await t.container.periodic.emitAnalytics();
    await idle.waitFor((f) => f.event === 'analytics.update');
    expect(idle.events()).toHaveLength(1);
    expect(idle.events()[0]!.data).toMatchObject({ total_memories: 0, searches: 1 });
  });

  it('emits user.activity once per user per window when a key is used', async () => {
    t = await sharedLiveApp();
    const watcher = await open('?events=user.activity', await t.key({ user: 'watcher' }));
    const other = await t.key({ user: 'ann' });
    const api = g1Http(t.url, other);
    await api.create({ title: 'x', content: 'y' });
    const frame = await watcher.waitFor((f) => f.event === 'user.activity' && f.data?.user_id === 'ann');
    expect(frame.data).toMatchObject({ user_id: 'ann', key_id: expect.stringMatching(/^key_/), surface: 'g1' });
    expect(frame.data!.first_request_at).toMatch(ISO);
    await api.create({ title: 'x2', content: 'y2' });
    await api.search({ query: 'y' });
    // Positive control: another user's first request, made after ann's, is announced; ann's would have come first.
    await g1Http(t.url, await t.key({ user: 'bob' })).search({ query: 'y' });
    await watcher.waitFor((f) => f.event === 'user.activity' && f.data?.user_id === 'bob');
    expect(watcher.events().filter((f) => f.data?.user_id === 'ann')).toHaveLength(1);

  });
});
