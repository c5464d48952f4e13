import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { ConfigError, loadConfig } from '../../src/app/config.ts';
import { isLoopback } from '../../src/app/metrics.routes.ts';
import { measuredEmbedder, queuedTexts } from '../../src/app/measured-embedder.ts';
import { warmUp } from '../../src/app/embedder.factory.ts';
import { createMetrics } from '../../src/adapters/metrics/metrics.registry.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';

/**
 * `GET /metrics` (issue 12 point 6): the Prometheus text format, counters that move by exactly the requests made,
 * route patterns as labels, webhook outcomes and queue depth, store size, and the three access modes. Runs on SQLite
 * and (the `postgres` project) on PostgreSQL.
 */

interface Sample { name: string; labels: Record<string, string>; value: number }

/**
 * A strict reader of the text exposition format (version 0.0.4): every line is a HELP line, a TYPE line, blank, or
 * `name{label="value",...} number`; every sample belongs to a family whose TYPE came before it.
 */
function parseExposition(text: string): Sample[] {
  const typed = new Map<string, string>();
  const samples: Sample[] = [];
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  // Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case (prom-client writes `Nan`).
  const value = '[-+]?(?:[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?|[Nn][Aa][Nn]|[Ii][Nn][Ff])';
  const sampleLine = new RegExp(`^(${name})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (${value})(?: -?\\d+)?$`);
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = new RegExp(`^# HELP (${name}) .*$`).exec(line);
    if (m) continue;
    m = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (m) {
      expect(typed.has(m[1]!), `TYPE given twice for ${m[1]}`).toBe(false);
      typed.set(m[1]!, m[2]!);
      continue;
    }
    m = sampleLine.exec(line);
    expect(m, `not a sample line: ${line}`).not.toBeNull();
    const [, sampleName, rawLabels, rawValue] = m!;
    const family = typed.has(sampleName!) ? sampleName! : sampleName!.replace(/_(bucket|sum|count|total|created)$/, '');
    expect(typed.has(family) || typed.has(sampleName!), `no TYPE line before ${sampleName}`).toBe(true);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (rawLabels ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    samples.push({ name: sampleName!, labels, value: /inf$/i.test(rawValue!) ? (rawValue!.startsWith('-') ? -Infinity : Infinity) : /nan/i.test(rawValue!) ? NaN : Number(rawValue) });
  }
  return samples;
}

/** The value of one series (0 when it is absent: a counter not yet incremented). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((sum, s) => sum + s.value, 0);
}

async function scrape(app: FastifyInstance, options: Partial<InjectOptions> = {}): Promise<Sample[]> {
  const res = await app.inject({ method: 'GET', url: '/metrics', ...options });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parseExposition(res.body);
}

describe('GET /metrics', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' } });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('answers the Prometheus text format, with the process metrics and every mnemo family', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const samples = parseExposition(res.body);
    for (const family of ['# TYPE mnemo_http_requests_total counter', '# TYPE mnemo_http_request_duration_seconds histogram',
      '# TYPE mnemo_webhook_deliveries_total counter', '# TYPE mnemo_webhook_queue_depth gauge',
      '# TYPE mnemo_embedding_duration_seconds histogram', '# TYPE mnemo_embedding_queued_texts gauge',
      '# TYPE mnemo_embedding_requests_in_flight gauge', '# TYPE mnemo_stream_connections gauge',
      '# TYPE mnemo_store_size_bytes gauge', '# TYPE process_cpu_user_seconds_total counter', '# TYPE nodejs_heap_size_used_bytes gauge']) {
      expect(res.body).toContain(family);
    }
    for (const outcome of ['delivered', 'failed_retry', 'failed_final', 'postponed']) {
      expect(samples.some((s) => s.name === 'mnemo_webhook_deliveries_total' && s.labels.outcome === outcome), outcome).toBe(true);
    }
  });

  it('counts exactly the requests made, under their route pattern, never the raw URL', async () => {
    const key = await t.freshTenant();
    const before = await scrape(t.app);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: { title: `m${i}`, content: 'counted' } });
      expect(res.statusCode, res.body).toBe(201);
    }
    for (const id of ['raw-id-one', 'raw-id-two', 'raw-id-three']) {
      expect((await t.app.inject({ method: 'GET', url: `/api/v1/memories/${id}`, headers: { 'x-api-key': key } })).statusCode).toBe(404);
    }
    expect((await t.app.inject({ method: 'GET', url: '/no/such/path-xyz' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/memories/a/b/c/d-xyz', headers: { 'x-api-key': key } })).statusCode).toBe(404);
    const after = await scrape(t.app);
    const moved = (labels: Record<string, string>) => valueOf(after, 'mnemo_http_requests_total', labels) - valueOf(before, 'mnemo_http_requests_total', labels);

    expect(moved({ surface: 'g1', route: '/api/v1/memories', method: 'POST', status: '201' })).toBe(2);
    expect(moved({ surface: 'g1', route: '/api/v1/memories/:id', method: 'GET', status: '404' })).toBe(3);
    expect(moved({ surface: 'server', route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(moved({ surface: 'g1', route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    // The scrape before this one was counted too (it answered before this scrape began).
    expect(moved({ surface: 'server', route: '/metrics', method: 'GET', status: '200' })).toBe(1);
    // No label carries a raw path or an id.
    for (const s of after.filter((x) => x.name.startsWith('mnemo_http_'))) {
      expect(s.labels.route, JSON.stringify(s.labels)).not.toMatch(/raw-id|xyz|mem_/);
    }

    // The histogram counted the same requests, its buckets cumulative and +Inf equal to the count.
    const hist = { surface: 'g1', route: '/api/v1/memories/:id', method: 'GET' };
    expect(valueOf(after, 'mnemo_http_request_duration_seconds_count', hist) - valueOf(before, 'mnemo_http_request_duration_seconds_count', hist)).toBe(3);
    const buckets = after.filter((s) => s.name === 'mnemo_http_request_duration_seconds_bucket'
      && Object.entries(hist).every(([k, v]) => s.labels[k] === v));
    const counts = buckets.map((b) => b.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(buckets.find((b) => b.labels.le === '+Inf')!.value).toBe(valueOf(after, 'mnemo_http_request_duration_seconds_count', hist));
    expect(valueOf(after, 'mnemo_http_request_duration_seconds_sum', hist)).toBeGreaterThan(0);

    // The embedder was timed: one call per created memory at least.
    const model = t.container.embedder.modelId;
    expect(valueOf(after, 'mnemo_embedding_duration_seconds_count', { model, outcome: 'ok' })
      - valueOf(before, 'mnemo_embedding_duration_seconds_count', { model, outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(after, 'mnemo_embedding_requests_in_flight')).toBe(0);
  });

  it('counts webhook deliveries by outcome after real deliveries to a loopback receiver, and shows the queue depth', async () => {
    const key = await t.freshTenant();
    const hook = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: `${receiver.url}/hook`, events: ['memory.created'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const before = await scrape(t.app);

    const created = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: { title: 'delivered', content: 'to the receiver' } });
    expect(created.statusCode, created.body).toBe(201);
    const queued = await scrape(t.app);
    expect(valueOf(queued, 'mnemo_webhook_queue_depth')).toBe(await t.container.storage.webhooks.pendingCount());
    expect(valueOf(queued, 'mnemo_webhook_queue_depth')).toBeGreaterThanOrEqual(1);

    expect(await t.container.deliveries.tick()).toBe(1);
    expect(receiver.received.filter((r) => r.url === '/hook')).toHaveLength(1);
    const delivered = await scrape(t.app);
    const moved = (from: typeof before, to: typeof before, outcome: string) =>
      valueOf(to, 'mnemo_webhook_deliveries_total', { outcome }) - valueOf(from, 'mnemo_webhook_deliveries_total', { outcome });
    expect(moved(before, delivered, 'delivered')).toBe(1);
    expect(moved(before, delivered, 'failed_retry')).toBe(0);
    expect(valueOf(delivered, 'mnemo_webhook_queue_depth')).toBe(0);

    // A receiver answering 500: the attempt failed and another is scheduled.
    receiver.respondWith((_q, res) => { res.statusCode = 500; res.end('no'); });
    try {
      const again = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key }, payload: { title: 'refused', content: 'by the receiver' } });
      expect(again.statusCode, again.body).toBe(201);
      expect(await t.container.deliveries.tick()).toBe(1);
    } finally {
      receiver.respondWith((_q, res) => { res.end('ok'); });
    }
    const failed = await scrape(t.app);
    expect(moved(delivered, failed, 'failed_retry')).toBe(1);
    expect(moved(delivered, failed, 'delivered')).toBe(0);
    expect(valueOf(failed, 'mnemo_webhook_queue_depth')).toBe(1);
  });

  it('shows the open stream connections and the store size', async () => {
    const slot = t.container.streams.acquire({ id: 'conn_metrics', keyId: 'k', tenantId: 'metrics', kind: 'sse', shutdown() {} });
    expect(slot.ok).toBe(true);
    try {
      expect(valueOf(await scrape(t.app), 'mnemo_stream_connections')).toBe(t.container.streams.size);
      expect(t.container.streams.size).toBeGreaterThanOrEqual(1);
    } finally {
      if (slot.ok) slot.release();
    }
    expect(valueOf(await scrape(t.app), 'mnemo_stream_connections')).toBe(t.container.streams.size);
    const size = valueOf(await scrape(t.app), 'mnemo_store_size_bytes');
    expect(size).toBeGreaterThan(0);
    expect(Number.isInteger(size)).toBe(true);
  });

  it('is outside every surface: no API key, no tier limit, no surface envelope', async () => {
    const freeKey = await t.freshTenant({ tier: 'free' });
    // More scrapes carrying the free key than its 60 requests a minute, and some with an invalid key: all answered,
    // none counted against the key (its next API request is still allowed).
    for (let i = 0; i < 90; i++) {
      const headers = i % 10 === 0 ? { 'x-api-key': 'mnemo_invalid' } : { 'x-api-key': freeKey };
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/memories', headers: { 'x-api-key': freeKey } });
    expect(api.statusCode, api.body).toBe(200);
    expect(Number(api.headers['x-ratelimit-remaining'])).toBeGreaterThan(50);
  });

  it('serves a loopback client of a real listening server', async () => {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${address}/metrics`);
    expect(res.status).toBe(200);
    expect(parseExposition(await res.text()).length).toBeGreaterThan(10);
  });
});

describe('GET /metrics access (MNEMO_METRICS)', () => {
  const token = 'm'.repeat(20) + 'etrics-token-0123456789';
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });
  const appWith = async (env: Record<string, string>) => {
    const app = await createTestApp({ env });
    apps.push(app);
    return app.app;
  };

  it('loopback (the default): 127.0.0.0/8 and ::1 are served; other addresses and relayed requests are 403', async () => {
    const app = await appWith({});
    for (const remoteAddress of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      expect((await app.inject({ method: 'GET', url: '/metrics', remoteAddress })).statusCode, remoteAddress).toBe(200);
    }
    for (const remoteAddress of ['10.0.0.5', '192.168.1.2', '::ffff:10.0.0.5', '2001:db8::1', '::2']) {
      const res = await app.inject({ method: 'GET', url: '/metrics', remoteAddress });
      expect(res.statusCode, remoteAddress).toBe(403);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toContain('loopback');
      expect(res.body).not.toContain('mnemo_');
    }
    for (const headers of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }]) {
      expect((await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers })).statusCode).toBe(403);
    }
  });

  it('off: there is no such route (404)', async () => {
    const app = await appWith({ MNEMO_METRICS: 'off' });
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('mnemo_http');
  });

  it('token: missing or wrong is 401 with a Bearer challenge; the right token is served from any address', async () => {
    const app = await appWith({ MNEMO_METRICS: 'token', MNEMO_METRICS_TOKEN: token });
    const attempts: Record<string, string>[] = [
      {}, { authorization: 'Bearer' }, { authorization: `Bearer ${token}x` }, { authorization: `Bearer ${token.slice(1)}` },
      { authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }, { 'x-api-key': token }, { authorization: token },
    ];
    for (const headers of attempts) {
      const res = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="mnemo-metrics"');
      expect(res.body).not.toContain('mnemo_');
    }
    for (const remoteAddress of ['10.0.0.5', '127.0.0.1']) {
      const res = await app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: { authorization: `bearer ${token}` } });
      expect(res.statusCode).toBe(200);
      expect(parseExposition(res.body).length).toBeGreaterThan(10);
    }
  });

  it('refuses a start with a short token, a token without token mode, or an unknown mode', () => {
    const error = (env: Record<string, string>) => {
      try {
        loadConfig({ MNEMO_DATA_DIR: '/tmp/unused', ...env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).variable;
      }
      return null;
    };
    expect(error({ MNEMO_METRICS: 'token' })).toBe('MNEMO_METRICS_TOKEN');
    expect(error({ MNEMO_METRICS: 'token', MNEMO_METRICS_TOKEN: 'x'.repeat(31) })).toBe('MNEMO_METRICS_TOKEN');
    expect(error({ MNEMO_METRICS_TOKEN: token })).toBe('MNEMO_METRICS_TOKEN');
    expect(error({ MNEMO_METRICS: 'public' })).toBe('MNEMO_METRICS');
    expect(error({ MNEMO_METRICS: 'token', MNEMO_METRICS_TOKEN: 'x'.repeat(32) })).toBeNull();
    expect(loadConfig({ MNEMO_DATA_DIR: '/tmp/unused' }).metrics).toEqual({ mode: 'loopback' });
  });

  it('tells loopback addresses apart', () => {
    for (const a of ['127.0.0.1', '127.255.0.1', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopback(a), a).toBe(true);
    for (const a of [undefined, '', '128.0.0.1', '10.127.0.1', '::', '::2', '::ffff:10.0.0.1', 'fe80::1', 'localhost']) expect(isLoopback(a), String(a)).toBe(false);
  });
});

describe('the timed embedder', () => {
  it('passes the adapter\'s extras through, reads the local queue, and times failed calls as errors', async () => {
    const metrics = createMetrics({ embeddingModel: 'fake:1' });
    let fail = false;
    let warmed = false;
    const inner = {
      modelId: 'fake:1', dimensions: 1,
      embed: async (texts: readonly string[]) => {
        if (fail) throw new Error('model down');
        return texts.map(() => new Float32Array(1));
      },
      close: async () => {},
      warmup: async () => { warmed = true; },
      stats: () => ({ queued: 7 }),
    };
    const embedder = measuredEmbedder(inner, metrics.embedding);
    await warmUp(embedder);
    expect(warmed).toBe(true);
    expect(queuedTexts(embedder)).toBe(7);
    expect(queuedTexts({ modelId: 'x', dimensions: 1, embed: async () => [], close: async () => {} })).toBeUndefined();
    await embedder.embed(['a', 'b']);
    fail = true;
    await expect(embedder.embed(['c'])).rejects.toThrow('model down');
    metrics.collectFrom({ pendingDeliveries: async () => { throw new Error('store down'); }, streamConnections: () => 0, storeSizeBytes: async () => 5, embeddingQueuedTexts: () => queuedTexts(embedder) });
    const samples = parseExposition(await metrics.render());
    expect(valueOf(samples, 'mnemo_embedding_duration_seconds_count', { model: 'fake:1', outcome: 'ok' })).toBe(1);
    expect(valueOf(samples, 'mnemo_embedding_duration_seconds_count', { model: 'fake:1', outcome: 'error' })).toBe(1);
    expect(valueOf(samples, 'mnemo_embedding_texts_total', { model: 'fake:1' })).toBe(3);
    expect(valueOf(samples, 'mnemo_embedding_queued_texts')).toBe(7);
    expect(valueOf(samples, 'mnemo_store_size_bytes')).toBe(5);
    // A source that fails reads NaN for that scrape; the scrape itself still answers.
    expect(valueOf(samples, 'mnemo_webhook_queue_depth')).toBeNaN();
  });
});
