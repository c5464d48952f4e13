import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.ts';
import { createTestApp } from '../support/test-app.ts';
import { bearer, sleep, startLiveApp, type LiveApp } from '../streams/support.ts';

type Answer = { status: number; retryAfter: string | null; body: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as Record<string, unknown> };
}
const json = (headers: Record<string, string>, body: unknown): RequestInit =>
  ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** Polls until `ready()` holds (server-side state reached through a real socket), or fails. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !ready(); i++) await sleep(5);
  if (!ready()) throw new Error(`timed out waiting for ${what}`);
}

describe('search admission: a bounded number run, a bounded number wait, the rest are 503 at once', () => {
  let provider: EmbeddingsServer;
  let t: LiveApp;
  let key: string;
  beforeAll(async () => {
    provider = await startEmbeddingsServer();
    // Each query embedding takes 300 ms at the provider, so searches overlap.
    provider.setDelay(300);
    t = await startLiveApp({ embedder: provider.embedder }, { MNEMO_MAX_CONCURRENT_SEARCHES: '2', MNEMO_MAX_QUEUED_SEARCHES: '2' });
    key = await t.key();
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  it('refuses searches past the line with 503 and Retry-After in each surface envelope; health still answers', async () => {
    const g1Search = () => call(`${t.url}/api/v1/memories/search`, json({ 'x-api-key': key }, { query: 'deploy' }));
    const admitted = [g1Search(), g1Search(), g1Search(), g1Search()];
    const admission = t.container.searchAdmission;
    await until(() => admission.active === 2 && admission.waiting === 2, 'two running and two waiting');

    const [g1, g3, g4, health] = await Promise.all([
      g1Search(),
      call(`${t.url}/api/v1/search`, json(bearer(key), { query: 'deploy' })),
      call(`${t.url}/v1/search?q=deploy`, { headers: bearer(key) }),
      call(`${t.url}/health`),
    ]);
    for (const refused of [g1, g3, g4]) {
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('1');
    }
    expect(g1.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('Too many searches'), request_id: expect.any(String) } });
    expect(g3.body).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE', request_id: expect.any(String) } });
    expect(g4.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' }, meta: { request_id: expect.any(String) } });
    expect(health.status).toBe(200);
    // The refused ones never reached the model: only the admitted ones are answered, all of them.
    expect((await Promise.all(admitted)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(admission.active + admission.waiting).toBe(0);
  });
});

describe('the search timeout counts time spent waiting', () => {
  let provider: EmbeddingsServer;
  let t: LiveApp;
  let key: string;
  beforeAll(async () => {
    provider = await startEmbeddingsServer();
    provider.setDelay(600);
    t = await startLiveApp({ embedder: provider.embedder }, {
      MNEMO_SEARCH_TIMEOUT_MS: '250', MNEMO_MAX_CONCURRENT_SEARCHES: '1', MNEMO_MAX_QUEUED_SEARCHES: '4',
    });
    key = await t.key();
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  it('answers 408 to a search whose deadline passed while it waited for a slot, without running it', async () => {
    const search = () => call(`${t.url}/v1/search?q=deploy`, { headers: bearer(key) });
    const running = search();
    await until(() => t.container.searchAdmission.active === 1, 'the first search running');
    const waiting = search();
    await until(() => t.container.searchAdmission.waiting === 1, 'the second search waiting');
    const [first, second] = await Promise.all([running, waiting]);
    expect(first.status).toBe(408);
    expect(second.status).toBe(408);
    expect(second.body).toMatchObject({ success: false, error: { code: 'SEARCH_TIMEOUT' } });
    // Only the first search asked the model: the second timed out in line.
    await until(() => t.container.searchAdmission.active === 0, 'the slot to be released');
    expect(provider.requests()).toBe(1);
  });
});

describe('search deadline from the request arrival (core)', () => {
  it('a search called after its request already waited longer than the timeout is a TIMEOUT', async () => {
    const t = await createTestApp({ env: { MNEMO_SEARCH_TIMEOUT_MS: '1000' }, overrides: { embedder: createHashingEmbedder({ dimensions: 64 }) } });
    try {
      const ctx = { scope: { tenantId: 'acme', mode: 'live' as const, workspace: 'default' }, userId: 'u', surface: 'g1' };
      const input = { query: 'deploy', limit: 5, threshold: 0, filter: {} };
      await expect(t.container.search.semantic({ ...ctx, arrivedAt: performance.now() - 1500 }, input))
        .rejects.toMatchObject({ code: 'TIMEOUT' });
      // The same search with time left runs.
      await expect(t.container.search.semantic({ ...ctx, arrivedAt: performance.now() - 100 }, input)).resolves.toMatchObject({ total: 0 });
    } finally {
      await t.close();
    }
  });
});

describe('event-loop pressure: every request but health answers 503 at once', () => {
  let t: LiveApp;
  let key: string;
  let busy: NodeJS.Timeout | undefined;
  beforeAll(async () => {
    t = await startLiveApp({}, { MNEMO_MAX_EVENT_LOOP_DELAY_MS: '5' }, { pressureSampleMs: 100 });
    key = await t.key();
    // Nothing is refused until two samples after listening (the start-up stall is no load).
    await sleep(250);
  });
  afterEach(() => clearInterval(busy));
  afterAll(async () => t.close());

  it('sheds load in each surface envelope with Retry-After, keeps /health, and recovers', async () => {
    // Keep the event loop lagging: 45 ms of work every 47 ms (every 100 ms sample holds two such stalls, far past the 5 ms limit).
    busy = setInterval(() => {
      const end = performance.now() + 45;
      while (performance.now() < end) { /* hold the loop */ }
    }, 47);
    // Each request is sent while the server's last sample says it is under pressure. A new sample can still be taken
    // between that check and the request's arrival, and a window can fall between two stalls of this same process: a
    // request then rightly passes. So each is tried up to five times; a server that never sheds fails all five.
    const underPressure = async <T extends { status: number }>(send: () => Promise<T>): Promise<T> => {
      let answer: T | undefined;
      for (let attempt = 0; attempt < 5; attempt++) {
        await until(() => t.app.isUnderPressure(), 'the event-loop delay to pass the limit');
        answer = await send();
        if (answer.status === 503) return answer;
      }
      return answer!;
    };
    const g1 = await underPressure(() => call(`${t.url}/api/v1/memories`, json({ 'x-api-key': key }, { title: 't', content: 'c' })));
    const g2 = await underPressure(() => call(`${t.url}/api/v1/memory`, { headers: bearer(key) }));
    const g4 = await underPressure(() => call(`${t.url}/v1/search?q=deploy`, { headers: bearer(key) }));
    for (const refused of [g1, g2, g4]) {
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.retryAfter).toBe('2');
    }
    expect(g1.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('overloaded') } });
    expect(g2.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
    expect(g4.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' }, meta: { request_id: expect.any(String) } });
    for (const path of ['/health', '/api/v1/health']) expect((await call(`${t.url}${path}`)).status).toBe(200);

    clearInterval(busy);
    await until(() => !t.app.isUnderPressure(), 'the event loop to settle');
    expect((await call(`${t.url}/api/v1/memories`, json({ 'x-api-key': key }, { title: 't', content: 'c' }))).status).toBe(201);
  });
});
