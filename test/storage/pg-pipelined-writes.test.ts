import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPgUniqueViolation, pgPoolExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import type { NewEvent } from '../../src/core/events/event.types.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import { DEFAULT_G9_RETRY } from '../../src/core/webhooks/webhook.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';

/**
 * A loopback relay that counts round trips as waits: a burst of client bytes sent after the server last answered is
 * one (pipelined statements go out in one burst; statements sent one after another's answer are one each).
 */
async function roundTripRelay(url: string): Promise<{ url: string; roundTrips: () => number; stop: () => Promise<void> }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let roundTrips = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    let answered = true;
    client.on('data', (chunk: Buffer) => {
      if (answered) roundTrips++;
      answered = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      answered = true;
      client.write(chunk);
    });
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(url);
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    roundTrips: () => roundTrips,
    stop: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

const scope = { tenantId: 'acme', mode: 'live' as const, workspace: 'default' };
const MODEL = 'test-model';
const vector = () => ({ modelId: MODEL, vector: Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0.1)) });

function memory(over: Partial<Memory> = {}): Memory {
  const at = new Date();
  return {
    id: `mem_${randomUUID()}`, clientId: null, scope, title: 'a title', content: 'some content', memoryType: 'fact', tags: [],
    metadata: {}, topicId: null, createdAt: at, updatedAt: at, createdBy: 'u', updatedBy: 'u', accessCount: 0, lastAccessed: null,
    validFrom: at, validUntil: null, supersededBy: null, version: 1, ...over,
  };
}

const created = (m: Memory): NewEvent[] => [
  { id: `evt_${randomUUID()}`, type: 'memory.created', scope: m.scope, createdAt: m.createdAt, data: { id: m.id, title: m.title } },
];

// The `pg` driver's path (a pool of pipelining connections, event appends under the advisory lock) against PGlite
// served on loopback, through a relay that counts the round trips of each write.
describe('PostgreSQL writes in pipelined round trips', () => {
  let database: FileDatabase;
  let served: SharedPglite;
  let relay: Awaited<ReturnType<typeof roundTripRelay>>;
  let executor: PgExecutor;
  let storage: Storage;
  beforeAll(async () => {
    database = await fileDatabase();
    served = await servePglite(database.pglite);
    relay = await roundTripRelay(served.url);
    executor = pgPoolExecutor(new pg.Pool({ connectionString: relay.url, max: 2 }));
    // Without the key cache's LISTEN session, whose probes and retries would pass through the relay mid-count.
    storage = await createPostgresStorage(executor, { keyCache: false });
  }, 60_000);
  afterAll(async () => {
    await storage?.close();
    await relay?.stop();
    await served?.stop();
    await database?.release();
  });

  /** The round trips `write` makes once the pool's connection is open. */
  async function roundTripsOf(write: () => Promise<unknown>): Promise<number> {
    await executor.query('SELECT 1');
    const before = relay.roundTrips();
    await write();
    return relay.roundTrips() - before;
  }

  it('creates a memory with its events in one round trip when no webhook could want them', async () => {
    const m = memory();
    const heard: string[] = [];
    const stop = storage.events.onAppended((events) => heard.push(...events.map((e) => e.id)));
    expect(await roundTripsOf(() => storage.memories.insert(m, vector(), created))).toBe(1);
    stop();
    expect(await storage.memories.findById(scope, m.id)).toMatchObject({ id: m.id, title: m.title });
    const events = await storage.events.readAfter({ ...scope, afterSeq: 0, limit: 100 });
    expect(events.filter((e) => e.data.id === m.id).map((e) => e.id)).toEqual(heard);
    // A taken client id: nothing written, the CONFLICT as before.
    const latest = await storage.events.latestSeq();
    await storage.memories.insert(memory({ clientId: 'c-1' }), vector(), created);
    await expect(storage.memories.insert(memory({ clientId: 'c-1' }), vector(), created)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await storage.events.latestSeq()).toBe(latest + 1);
  });

  it('appends events in one round trip, and with their deliveries when a webhook is a candidate', async () => {
    const system: NewEvent = { id: `evt_${randomUUID()}`, type: 'system.health', scope: { tenantId: null, mode: null, workspace: null }, createdAt: new Date(), data: {} };
    expect(await roundTripsOf(() => storage.events.append([system]))).toBe(1);

    const at = new Date();
    await storage.webhooks.insert({
      id: `wh_${randomUUID()}`, kind: 'g9', scope, url: 'https://example.com/hook', events: ['memory.created'], description: null,
      status: 'active', retryPolicy: DEFAULT_G9_RETRY, filters: {}, createdAt: at,
      updatedAt: at, lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
    }, { keyId: 'k', wrappedKey: 'w', payload: 'p' });
    const m = memory();
    await storage.memories.insert(m, vector(), created);
    expect(await storage.webhooks.pendingCount()).toBe(1);
    const events = await storage.events.readAfter({ ...scope, afterSeq: 0, limit: 100 });
    expect(events.filter((e) => e.data.id === m.id).map((e) => e.type)).toEqual(['memory.created']);
  });

  it('rolls a pipelined transaction back at its first failing statement, and throws that statement\'s error', async () => {
    await executor.exec('CREATE TABLE pipelined (id text PRIMARY KEY)');
    const insert = (id: string) => ({ sql: 'INSERT INTO pipelined (id) VALUES ($1) RETURNING id', params: [id] });
    const failed = await executor.pipelineTransaction!([insert('a'), insert('b'), insert('a'), insert('c')]).catch((err: unknown) => err);
    expect(isPgUniqueViolation(failed)).toBe(true);
    expect(await executor.query('SELECT id FROM pipelined')).toEqual([]);
    expect(await executor.pipelineTransaction!([insert('a'), insert('b')])).toEqual([[{ id: 'a' }], [{ id: 'b' }]]);
    expect(await executor.query('SELECT id FROM pipelined ORDER BY id')).toEqual([{ id: 'a' }, { id: 'b' }]);
  });
});
