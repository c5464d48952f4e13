import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../src/adapters/storage/postgres/pg-api-key-cache.ts';
import { listenForApiKeyChanges, type ApiKeyListener } from '../../src/adapters/storage/postgres/pg-api-key-listener.ts';
import { createPgApiKeyRepository } from '../../src/adapters/storage/postgres/pg-api-key.repository.ts';
import { pgliteExecutor, pgPoolExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { migratePostgres } from '../../src/adapters/storage/postgres/pg-migrations.ts';
import { PgOutbox } from '../../src/adapters/storage/postgres/pg-outbox.ts';
import type { ApiKeyRepository } from '../../src/core/api-keys/api-key.repository.ts';
import type { ApiKeyRecord } from '../../src/core/api-keys/api-key.types.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';

/** A cache that says when an eviction arrives, so a test awaits another node's notification instead of sleeping. */
class ObservedCache extends ApiKeyCache {
  private waiters: { id: string; resolve: () => void }[] = [];
  override evict(id: string): void {
    super.evict(id);
    for (const w of this.waiters.filter((x) => x.id === id)) w.resolve();
    this.waiters = this.waiters.filter((x) => x.id !== id);
  }
  evicted(id: string): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ id, resolve }));
  }
  private switched: { on: boolean; resolve: () => void }[] = [];
  override enable(): void {
    super.enable();
    this.settle(true);
  }
  override disable(): void {
    super.disable();
    this.settle(false);
  }
  /** Resolves when the cache is next enabled (`on`) or disabled. */
  turned(on: boolean): Promise<void> {
    return new Promise((resolve) => this.switched.push({ on, resolve }));
  }
  private settle(on: boolean): void {
    for (const w of this.switched.filter((x) => x.on === on)) w.resolve();
    this.switched = this.switched.filter((x) => x.on !== on);
  }
}

/**
 * An executor that counts the key lookups it is asked for, whose LISTEN session a test can cut, and whose key
 * notifications a test can hold back (so that what happens before the notification arrives is seen).
 */
function observed(db: PgExecutor) {
  const lost: ((err: Error) => void)[] = [];
  const counter = { lookups: 0 };
  let held: (() => void)[] | null = null;
  const executor: PgExecutor = {
    ...db,
    query: async (sql, params) => {
      if (sql.includes('FROM api_keys WHERE digest')) counter.lookups++;
      return db.query(sql, params);
    },
    listen: async (channel, onNotification, onLost) => {
      lost.push(onLost);
      const deliver = (payload: string) => (held && !payload.startsWith('probe:') ? held.push(() => onNotification(payload)) : onNotification(payload));
      return db.listen!(channel, deliver, onLost);
    },
  };
  const hold = () => {
    held = [];
    return () => {
      const queued = held ?? [];
      held = null;
      for (const f of queued) f();
    };
  };
  return { executor, counter, cut: () => lost.at(-1)!(new Error('connection lost')), hold };
}

interface Node { hold: () => () => void; sql: (statement: string, params: unknown[]) => Promise<unknown>; keys: ApiKeyRepository; cache: ObservedCache; listener: ApiKeyListener; counter: { lookups: number }; cut: () => void | Promise<void> }

/** `cut`: how the node's LISTEN session is lost (by default the executor reports it lost). */
function openNode(db: PgExecutor, cutSession?: () => Promise<void>, retryMs = { first: 1, max: 1 }): Node {
  const { executor, counter, cut: reportLost, hold } = observed(db);
  const cut = cutSession ?? reportLost;
  const cache = new ObservedCache();
  const listener = listenForApiKeyChanges(executor, cache, { retryMs });
  return { hold, sql: (statement, params) => db.query(statement, params), keys: createPgApiKeyRepository(executor, new PgOutbox(db.sessions === 'many'), cache), cache, listener, counter, cut };
}

let n = 0;
function keyRecord(): ApiKeyRecord {
  n++;
  return {
    id: `key_${n}_${process.pid}`, tenantId: 'tenant-a', userId: 'user-1', name: `key ${n}`, tier: 'free', mode: 'live',
    scopes: ['memories:read', 'memories:write'], displayPrefix: 'mnemo_live_abc', digest: `${process.pid}`.padEnd(16, '0') + `${n}`.padStart(48, '0'),
    createdAt: new Date('2026-01-01T00:00:00Z'), expiresAt: null, revokedAt: null, replacedBy: null,
  };
}
const owner = { tenantId: 'tenant-a', mode: 'live' as const };

/** The same behaviour over any pair of nodes sharing one database. */
function describeTwoNodes(name: string, open: () => Promise<{ a: Node; b: Node; close: () => Promise<void> }>) {
  describe(name, () => {
    let a: Node;
    let b: Node;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ a, b, close } = await open());
      await Promise.all([a.listener.ready, b.listener.ready]);
    }, 60_000);
    afterAll(async () => { await close?.(); });

    it('serves a key from memory once read, both nodes listening', async () => {
      expect(a.cache.enabled && b.cache.enabled).toBe(true);
      const k = keyRecord();
      await a.keys.insert(k);
      const before = a.counter.lookups;
      expect((await a.keys.findByDigest(k.digest))?.id).toBe(k.id);
      expect((await a.keys.findByDigest(k.digest))?.id).toBe(k.id);
      expect(a.counter.lookups - before).toBe(1);
    });

    it('a revocation is refused at once on its node and after the notification on the other', async () => {
      const k = keyRecord();
      await a.keys.insert(k);
      await a.keys.findByDigest(k.digest);
      await b.keys.findByDigest(k.digest);
      expect((await b.keys.findByDigest(k.digest))?.revokedAt).toBeNull();
      const heard = b.cache.evicted(k.id);
      // Node A's own notification held back: its own call must have evicted the key.
      const release = a.hold();
      expect(await a.keys.revoke(k.id, new Date('2026-02-01T00:00:00Z'))).toBe(true);
      expect((await a.keys.findByDigest(k.digest))?.revokedAt).toEqual(new Date('2026-02-01T00:00:00Z'));
      release();
      await heard;
      expect((await b.keys.findByDigest(k.digest))?.revokedAt).toEqual(new Date('2026-02-01T00:00:00Z'));
    });

    it('a rotation and a change of scopes reach both nodes', async () => {
      const k = keyRecord();
      await a.keys.insert(k);
      await Promise.all([a.keys.findByDigest(k.digest), b.keys.findByDigest(k.digest)]);
      let heard = b.cache.evicted(k.id);
      let release = a.hold();
      expect((await a.keys.update(owner, k.id, { scopes: ['memories:read'] }))?.scopes).toEqual(['memories:read']);
      expect((await a.keys.findByDigest(k.digest))?.scopes).toEqual(['memories:read']);
      release();
      await heard;
      expect((await b.keys.findByDigest(k.digest))?.scopes).toEqual(['memories:read']);

      const replacement = keyRecord();
      // Both nodes hold the re-scoped key again before the rotation.
      await Promise.all([a.keys.findByDigest(k.digest), b.keys.findByDigest(k.digest)]);
      expect([a.cache.get(k.digest)?.scopes, b.cache.get(k.digest)?.scopes]).toEqual([['memories:read'], ['memories:read']]);
      heard = b.cache.evicted(k.id);
      release = a.hold();
      expect(await a.keys.rotate(owner, k.id, replacement, new Date('2026-03-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z'))).toBe(true);
      expect((await a.keys.findByDigest(k.digest))?.replacedBy).toBe(replacement.id);
      release();
      await heard;
      const seen = await b.keys.findByDigest(k.digest);
      expect([seen?.replacedBy, seen?.expiresAt]).toEqual([replacement.id, new Date('2026-03-01T00:00:00Z')]);
    });

    it('a key deleted in SQL (an operator\'s cleanup) is forgotten by the nodes', async () => {
      const k = keyRecord();
      await a.keys.insert(k);
      await b.keys.findByDigest(k.digest);
      const heard = b.cache.evicted(k.id);
      await a.sql('DELETE FROM api_keys WHERE id = $1', [k.id]);
      await heard;
      expect(await b.keys.findByDigest(k.digest)).toBeNull();
    });

    it('a lost LISTEN session empties and bypasses the cache until it listens again', async () => {
      const k = keyRecord();
      await b.keys.insert(k);
      await b.keys.findByDigest(k.digest);
      expect(b.cache.size).toBeGreaterThan(0);
      const back = b.cache.turned(true);
      const off = b.cache.turned(false);
      await b.cut();
      await off;
      expect(b.cache.size).toBe(0);
      const before = b.counter.lookups;
      if (!b.cache.enabled) {
        await b.keys.findByDigest(k.digest);
        expect(b.counter.lookups - before).toBe(1);
      }
      // Listening again (the retry after 1 ms): served from memory once read.
      await back;
      await b.keys.findByDigest(k.digest);
      const read = b.counter.lookups;
      await b.keys.findByDigest(k.digest);
      expect(b.counter.lookups).toBe(read);
    });
  });
}

describe('ApiKeyCache', () => {
  it('keeps no row read before an eviction that came in meanwhile', () => {
    const cache = new ApiKeyCache();
    cache.enable();
    const k = keyRecord();
    const token = cache.begin();
    cache.evict('another key');
    cache.store(token, k);
    expect(cache.get(k.digest)).toBeUndefined();
    cache.store(cache.begin(), k);
    expect(cache.get(k.digest)?.id).toBe(k.id);
  });

  it('serves nothing while disabled, starts empty when enabled, and drops the oldest past its size', () => {
    const cache = new ApiKeyCache(2);
    const [k1, k2, k3] = [keyRecord(), keyRecord(), keyRecord()];
    cache.store(cache.begin(), k1);
    expect(cache.size).toBe(0);
    cache.enable();
    for (const k of [k1, k2, k3]) cache.store(cache.begin(), k);
    expect([cache.get(k1.digest), cache.get(k2.digest)?.id, cache.get(k3.digest)?.id]).toEqual([undefined, k2.id, k3.id]);
    const copy = cache.get(k2.digest)!;
    copy.scopes.push('secrets:read');
    expect(cache.get(k2.digest)?.scopes).toEqual(k2.scopes);
    cache.disable();
    expect([cache.get(k2.digest), cache.size]).toEqual([undefined, 0]);
  });
});

let database: FileDatabase | undefined;
let pglite: PGlite;
beforeAll(async () => {
  database = await fileDatabase();
  pglite = database.pglite;
  await migratePostgres(pgliteExecutor(pglite));
}, 60_000);
afterAll(async () => { await database?.release(); });

// In process, the two nodes share PGlite's one session; its notifications reach every listener of it.
describeTwoNodes('api key cache, two nodes on one PGlite', async () => {
  const shared = { ...pgliteExecutor(pglite), close: async () => undefined };
  const [a, b] = [openNode(shared), openNode(shared)];
  return { a, b, close: async () => { await a.listener.close(); await b.listener.close(); } };
});

describe('api key cache without notifications', () => {
  it('stays bypassed when the probe notification never comes back', async () => {
    const deaf: PgExecutor = { ...pgliteExecutor(pglite), close: async () => undefined, listen: async () => ({ close: async () => undefined }) };
    const cache = new ApiKeyCache();
    const listener = listenForApiKeyChanges(deaf, cache, { probeTimeoutMs: 20, retryMs: { first: 60_000, max: 60_000 } });
    await listener.ready;
    const keys = createPgApiKeyRepository(deaf, new PgOutbox(false), cache);
    const k = keyRecord();
    await keys.insert(k);
    await keys.findByDigest(k.digest);
    expect([cache.enabled, cache.size]).toEqual([false, 0]);
    await listener.close();
  });
});

describe('api key cache heartbeat', () => {
  it('stops serving when its session goes silent without being reported lost, and serves again once it hears', async () => {
    const base = { ...pgliteExecutor(pglite), close: async () => undefined };
    let muted = false;
    const closedSessions: number[] = [];
    let sessions = 0;
    // A LISTEN session that keeps "working" while muted but delivers nothing, as a path gone silent would.
    const silent: PgExecutor = {
      ...base,
      listen: async (channel, onNotification, onLost) => {
        const id = ++sessions;
        const inner = await base.listen!(channel, (payload) => { if (!muted) onNotification(payload); }, onLost);
        return { close: async () => { closedSessions.push(id); await inner.close(); } };
      },
    };
    const cache = new ObservedCache();
    const listener = listenForApiKeyChanges(silent, cache, { heartbeatMs: 20, probeTimeoutMs: 50, retryMs: { first: 10, max: 10 } });
    await listener.ready;
    const keys = createPgApiKeyRepository(silent, new PgOutbox(false), cache);
    const k = keyRecord();
    await keys.insert(k);
    await keys.findByDigest(k.digest);
    expect([cache.enabled, cache.size]).toEqual([true, 1]);
    // A change made meanwhile would go unheard: the heartbeat's probe does not come back, and the cache stops.
    const off = cache.turned(false);
    muted = true;
    await off;
    expect([cache.enabled, cache.size]).toEqual([false, 0]);
    expect(closedSessions).toContain(1);
    const on = cache.turned(true);
    muted = false;
    await on;
    expect(cache.enabled).toBe(true);
    await listener.close();
  });
});

// A real server when MNEMO_TEST_DATABASE_URL names one: each node a pool, the LISTEN session a real connection.
const url = process.env.MNEMO_TEST_DATABASE_URL;
if (url) {
  const schema = `mnemo_keycache_${process.pid}`;
  const pools: pg.Pool[] = [];
  const openPool = (applicationName = schema) => {
    const pool = new pg.Pool({ connectionString: url, max: 2, application_name: applicationName });
    pool.on('connect', (client) => { void client.query(`SET search_path TO ${schema}, public`); });
    pools.push(pool);
    return pgPoolExecutor(pool);
  };
  describeTwoNodes('api key cache, two nodes on a PostgreSQL server', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    await migratePostgres(openPool());
    // Node b's LISTEN session is cut as a network failure would: its backend terminated.
    const terminate = async () => {
      const killer = new pg.Client({ connectionString: url });
      await killer.connect();
      await killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'", [`${schema}_b`]);
      await killer.end();
    };
    const [a, b] = [openNode(openPool()), openNode(openPool(`${schema}_b`), terminate)];
    return {
      a, b,
      close: async () => {
        await a.listener.close();
        await b.listener.close();
        for (const p of pools) await p.end();
        const drop = new pg.Client({ connectionString: url });
        await drop.connect();
        await drop.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await drop.end();
      },
    };
  });
} else {
  it.skip('api key cache on a PostgreSQL server: set MNEMO_TEST_DATABASE_URL', () => undefined);
}
