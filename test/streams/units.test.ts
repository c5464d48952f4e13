import { describe, expect, it } from 'vitest';
import type { FieldProblem } from '../../src/core/errors.ts';
import { createConnectionRegistry } from '../../src/core/streams/connection-registry.ts';
import { eventPasses, parseStreamFilter } from '../../src/core/streams/event-filter.ts';
import { createRateWindow } from '../../src/core/streams/rate-window.ts';
import { parseStreamParams } from '../../src/surfaces/g8-events/requests.ts';
import { DEFAULT_REALTIME_SETTINGS } from '../../src/core/streams/settings.ts';
import { redactUrlCredentials } from '../../src/surfaces/http-kit/log-redaction.ts';
import { surfaceResolver } from '../../src/surfaces/http-kit/surface-of.ts';
import { g1Surface } from '../../src/surfaces/g1-memories/index.ts';
import { g2Surface } from '../../src/surfaces/g2-legacy-memory/index.ts';
import { g4Surface } from '../../src/surfaces/g4-discovery/index.ts';

describe('connection registry', () => {
  const conn = (shut: string[], id: string, keyId: string, tenantId = 't1') =>
    ({ id, keyId, tenantId, kind: 'sse', shutdown: () => { shut.push(id); } });

  it('holds at most maxPerKey per key, frees on release, and shuts everything down', async () => {
    const r = createConnectionRegistry({ maxPerKey: 2, maxPerTenant: 100, maxTotal: 100 });
    const shut: string[] = [];
    const a = r.acquire(conn(shut, 'a', 'k1'));
    const b = r.acquire(conn(shut, 'b', 'k1'));
    expect(r.acquire(conn(shut, 'c', 'k1'))).toEqual({ ok: false, cap: 'key', open: 2 });
    expect(r.acquire(conn(shut, 'd', 'k2')).ok).toBe(true);
    if (!a.ok || !b.ok) throw new Error('expected slots');
    a.release();
    a.release();
    expect(r.count('k1')).toBe(1);
    expect(r.acquire(conn(shut, 'e', 'k1')).ok).toBe(true);
    await r.shutdown();
    expect(shut.sort()).toEqual(['b', 'd', 'e']);
    expect(r.acquire(conn(shut, 'f', 'k3'))).toMatchObject({ ok: false, cap: 'closing' });
  });

  it('caps a tenant across its keys, and the process across tenants; releases free both', () => {
    const r = createConnectionRegistry({ maxPerKey: 2, maxPerTenant: 3, maxTotal: 4 });
    const shut: string[] = [];
    const t1 = [r.acquire(conn(shut, 'a', 'k1')), r.acquire(conn(shut, 'b', 'k1')), r.acquire(conn(shut, 'c', 'k2'))];
    expect(t1.every((s) => s.ok)).toBe(true);
    expect(r.acquire(conn(shut, 'd', 'k3'))).toEqual({ ok: false, cap: 'tenant', open: 3 });
    expect(r.countTenant('t1')).toBe(3);
    // Another tenant gets the last slot of the process, then the process is full for everyone.
    expect(r.acquire(conn(shut, 'e', 'k4', 't2')).ok).toBe(true);
    expect(r.acquire(conn(shut, 'f', 'k5', 't3'))).toEqual({ ok: false, cap: 'process', open: 4 });
    const first = t1[0]!;
    if (!first.ok) throw new Error('expected a slot');
    first.release();
    first.release();
    expect([r.size, r.countTenant('t1')]).toEqual([3, 2]);
    expect(r.acquire(conn(shut, 'g', 'k5', 't3')).ok).toBe(true);
    expect(r.acquire(conn(shut, 'h', 'k3'))).toMatchObject({ ok: false, cap: 'process' });
  });
});

describe('G8 filters', () => {
  const parse = (pairs: [string, string][]) => {
    const problems: FieldProblem[] = [];
    return { filter: parseStreamFilter(pairs, problems), problems };
  };
  const memory = (data: Record<string, unknown>) => ({ type: 'memory.created', data });

  it('matches tags (any of), memory_type and metadata as text; other events always pass', () => {
    const { filter, problems } = parse([['tags', 'ops, infra'], ['memory_type', 'project'], ['env', 'prod'], ['n', '3'], ['team.name', 'web']]);
    expect(problems).toEqual([]);
    const ok = { tags: ['infra'], memory_type: 'project', metadata: { env: 'prod', n: 3, team: { name: 'web' } } };
    expect(eventPasses(filter, memory(ok))).toBe(true);
    expect(eventPasses(filter, memory({ ...ok, tags: ['food'] }))).toBe(false);
    expect(eventPasses(filter, memory({ ...ok, memory_type: 'context' }))).toBe(false);
    expect(eventPasses(filter, memory({ ...ok, metadata: { ...ok.metadata, env: 'dev' } }))).toBe(false);
    expect(eventPasses(filter, memory({ ...ok, metadata: { ...ok.metadata, team: 'web' } }))).toBe(false);
    // Lacking the field: no match.
    expect(eventPasses(filter, { type: 'memory.deleted', data: { tags: ['ops'], metadata: ok.metadata } })).toBe(false);
    expect(eventPasses(filter, { type: 'system.health', data: {} })).toBe(true);
    expect(eventPasses(filter, { type: 'search.performed', data: {} })).toBe(true);
  });

  it('merges repeated keys and `[]` keys into any-of, and reports bad keys and empty values', () => {
    const { filter } = parse([['env[]', 'prod'], ['env[]', 'staging'], ['tags', 'a'], ['tags', 'b']]);
    expect(filter).toEqual({ tags: ['a', 'b'], metadata: [['env', ['prod', 'staging']]] });
    expect(eventPasses(filter, memory({ tags: ['b'], metadata: { env: ['x', 'staging'] } }))).toBe(true);
    const { problems } = parse([['a b', 'x'], ['tags', ' ']]);
    expect(problems.map((p) => p.field)).toEqual(['filters[a b]', 'filters[tags]']);
  });

  it('reads the raw query: repeated events, filters[...] keys, heartbeat floor', () => {
    const problems: FieldProblem[] = [];
    const p = parseStreamParams('/api/v1/stream?events=memory.created,memory.deleted&events=system.health&filters%5Btags%5D=x&heartbeat=5&last_event_id=evt_1',
      DEFAULT_REALTIME_SETTINGS, problems);
    expect(problems).toEqual([]);
    expect(p).toMatchObject({ types: ['memory.created', 'memory.deleted', 'system.health'], heartbeatSeconds: 30, lastEventId: 'evt_1', filter: { tags: ['x'] } });
    expect(parseStreamParams('/api/v1/stream?heartbeat=90', DEFAULT_REALTIME_SETTINGS, problems).heartbeatSeconds).toBe(90);
    expect(parseStreamParams('/api/v1/stream', DEFAULT_REALTIME_SETTINGS, problems).types).toContain('analytics.update');
  });
});

describe('small helpers', () => {
  it('caps a sliding window', () => {
    let now = 0;
    const w = createRateWindow({ max: 2, windowMs: 100, now: () => now });
    expect([w.take(), w.take(), w.take()]).toEqual([true, true, false]);
    now = 100;
    expect(w.take()).toBe(true);
  });

  it('redacts access tokens from logged URLs and names surfaces', () => {
    expect(redactUrlCredentials('/v1/search/live?x=1&access_token=mnemo_live_abc&y=2')).toBe('/v1/search/live?x=1&access_token=[redacted]&y=2');
    // Judged by the decoded name (as the query parser reads it), in any case and punctuation.
    for (const name of ['access%5Ftoken', '%61ccess_token', 'ACCESS_TOKEN', 'Access-Token', 'access+token', 'api_key', 'apikey', 'X-API-Key', 'token', 'key']) {
      expect(redactUrlCredentials(`/p?q=a%3Db&${name}=%73ecret%20value&n=2`), name).toBe(`/p?q=a%3Db&${name}=[redacted]&n=2`);
    }
    expect(redactUrlCredentials('/p?keys=1&tokens=2&access_token')).toBe('/p?keys=1&tokens=2&access_token');
    // Key-shaped text anywhere (a key pasted into a path or another parameter).
    expect(redactUrlCredentials(`/api/v1/memories/mnemo_test_${'a1'.repeat(18)}?q=mnemo_live_${'Z9'.repeat(18)}`)).toBe('/api/v1/memories/[redacted]?q=[redacted]');
    const surfaceOfUrl = surfaceResolver([g1Surface, g2Surface, g4Surface]);
    expect(surfaceOfUrl('/api/v1/memories/abc?x=1')).toBe('g1');
    expect(surfaceOfUrl('/api/v1/memory/abc')).toBe('g2');
    expect(surfaceOfUrl('/v1/search/live')).toBe('g4');
    expect(surfaceOfUrl('/health')).toBeUndefined();
  });
});
