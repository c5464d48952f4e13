import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import { createConnectionRegistry, type ConnectionRegistry } from '../../src/core/streams/connection-registry.ts';
import { DEFAULT_REALTIME_SETTINGS, type RealtimeSettings } from '../../src/core/streams/settings.ts';
import type { StreamRefusal } from '../../src/surfaces/http-kit/stream-refusal.ts';
import { openStreamSession, type StreamEnd, type StreamSessionDeps } from '../../src/surfaces/http-kit/stream-session.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { sleep } from './support.ts';

/**
 * The stream session of http-kit over the real key service, connection registry and activity tracker; the
 * transport is this file's own: it records what the client would be told, and reports its end when told to end,
 * or when the test says the client left (as often as the test likes).
 */
function transport() {
  const listeners: (() => void)[] = [];
  const told: string[] = [];
  let closed = false;
  const finish = () => {
    closed = true;
    for (const l of [...listeners]) l();
  };
  const end: StreamEnd = {
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
    refuse(r: StreamRefusal) {
      told.push(`${r.code}: ${r.message}`);
      finish();
    },
    goingAway() {
      told.push('going away');
      finish();
    },
    revoked(message) {
      told.push(`revoked: ${message}`);
      finish();
    },
  };
  /** The client leaves: the transport reports its end (a sloppy one may report it more than once). */
  return { end, told, clientLeft: finish };
}

describe('stream session (http-kit)', () => {
  let t: TestApp;
  const realtime: RealtimeSettings = { ...DEFAULT_REALTIME_SETTINGS, timeUnitMs: 5, keyCheckSeconds: 2, maxConnectionsPerKey: 2 };
  let registry: ConnectionRegistry;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const deps = (): StreamSessionDeps => ({ apiKeys: t.container.apiKeys, streams: registry, realtime, activity: t.container.activity });
  const caller = async (user = 'u1') => {
    const { record, key } = await t.container.apiKeys.create({ tenantId: 'acme', userId: user, tier: 'pro', mode: 'live' });
    return { keyId: record.id, credential: key, principal: await t.container.apiKeys.authenticate(key) };
  };
  const open = (c: { principal: Principal; credential: string }, end: StreamEnd) => openStreamSession(deps(), {
    principal: c.principal, credential: c.credential, scope: { tenantId: 'acme', mode: 'live', workspace: 'default' },
    surface: 'g8', kind: 'test', log: t.app.log,
  }, end);

  it('holds one slot and gives it, the timers and the cleanups back exactly once, however often the end is reported', async () => {
    registry = createConnectionRegistry({ maxPerKey: realtime.maxConnectionsPerKey, maxPerTenant: 100, maxTotal: 100 });
    const c = await caller();
    const [a, b] = [transport(), transport()];
    const sa = (await open(c, a.end))!;
    const sb = (await open(c, b.end))!;
    expect(registry.count(c.keyId)).toBe(2);
    let cleanups = 0;
    let ticksA = 0;
    let ticksB = 0;
    sa.onEnd(() => { cleanups += 1; });
    sa.every(1, () => { ticksA += 1; });
    sb.every(1, () => { ticksB += 1; });
    while (ticksA < 2) await sleep(5);

    a.clientLeft();
    a.clientLeft();
    expect([sa.closed, cleanups, registry.count(c.keyId)]).toEqual([true, 1, 1]);
    const frozen = ticksA;
    const before = ticksB;
    while (ticksB < before + 3) await sleep(5);
    expect(ticksA).toBe(frozen);
    // A cleanup added after the end runs at once, once.
    sa.onEnd(() => { cleanups += 1; });
    expect(cleanups).toBe(2);

    // The freed slot is taken again; past the key's cap the transport is told which cap refused it.
    const c2 = transport();
    expect(await open(c, c2.end)).not.toBeNull();
    const refused = transport();
    expect(await open(c, refused.end)).toBeNull();
    expect(refused.told).toEqual(['RATE_LIMITED: Too many connections: at most 2 concurrent streams per API key']);
    expect(registry.count(c.keyId)).toBe(2);
    b.clientLeft();
    c2.clientLeft();
    expect(registry.size).toBe(0);
  });

  it('tells every open stream to go away at shutdown, frees their slots, and refuses new ones', async () => {
    registry = createConnectionRegistry({ maxPerKey: 5, maxPerTenant: 100, maxTotal: 100 });
    const c = await caller();
    const [a, b] = [transport(), transport()];
    await open(c, a.end);
    await open(c, b.end);
    await registry.shutdown();
    expect([a.told, b.told]).toEqual([['going away'], ['going away']]);
    expect(registry.size).toBe(0);
    const late = transport();
    expect(await open(c, late.end)).toBeNull();
    expect(late.told).toEqual(['CONNECTION_ERROR: The server is shutting down']);
  });

  it('closes a stream whose key is revoked, by the periodic re-check, and keeps the others', async () => {
    registry = createConnectionRegistry({ maxPerKey: 5, maxPerTenant: 100, maxTotal: 100 });
    const [doomed, staying] = [await caller('ann'), await caller('bob')];
    const [d, s] = [transport(), transport()];
    const sd = (await open(doomed, d.end))!;
    const ss = (await open(staying, s.end))!;
    expect(await sd.keyStillValid()).toBe(true);
    await t.container.apiKeys.revoke(doomed.keyId);
    // Nobody calls keyStillValid here: the session's own timer (every 2 units of 5 ms) finds the revocation.
    for (let i = 0; i < 400 && !sd.closed; i++) await sleep(5);
    expect(d.told).toEqual(['revoked: API key has been revoked']);
    expect(sd.closed).toBe(true);
    expect(registry.count(doomed.keyId)).toBe(0);
    expect(await sd.keyStillValid()).toBe(false);
    expect(d.told).toHaveLength(1);
    // Positive control: the other key's stream was re-checked just as often and stays.
    expect(await ss.keyStillValid()).toBe(true);
    expect([ss.closed, s.told]).toEqual([false, []]);
    s.clientLeft();
  });

  it('opens nothing for a connection that has already ended, and notes user.activity for one that opens', async () => {
    registry = createConnectionRegistry({ maxPerKey: 5, maxPerTenant: 100, maxTotal: 100 });
    const gone = transport();
    gone.clientLeft();
    expect(await open(await caller('cy'), gone.end)).toBeNull();
    expect(registry.size).toBe(0);

    const dee = await caller('dee');
    const from = await t.container.storage.events.latestSeq();
    const live = transport();
    expect(await open(dee, live.end)).not.toBeNull();
    let seen: string[] = [];
    for (let i = 0; i < 200 && seen.length === 0; i++) {
      const events = await t.container.storage.events.readAfter({
        tenantId: 'acme', mode: 'live', workspace: 'default', afterSeq: from, types: ['user.activity'], limit: 10,
      });
      seen = events.map((e) => `${String(e.data.user_id)}@${String(e.data.surface)}`);
      if (seen.length === 0) await sleep(5);
    }
    expect(seen).toEqual(['dee@g8']);
    live.clientLeft();
  });
});
