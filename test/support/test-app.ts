import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer, type Container, type ContainerOverrides } from '../../src/app/container.ts';
import { buildServer, type ServerOptions } from '../../src/app/server.ts';
import type { Permission, Tier } from '../../src/core/api-keys/api-key.types.ts';
import type { KeyMode } from '../../src/core/scope.ts';
import { openTestPostgresStorage, recycleTestPostgresStorage, testStoreKind } from './test-store.ts';

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  /** Creates a key and returns its text; the tenant defaults to the current one (see freshTenant). */
  key(options?: KeyOptions & { tenant?: string }): Promise<string>;
  /**
   * Switches to a new tenant no other test has used, so tests sharing one app (one per file) see only their own
   * data; later key() calls default to it. Returns a key of that tenant.
   */
  freshTenant(options?: KeyOptions): Promise<string>;
  /** The tenant key() uses by default: `acme` until freshTenant() is called. */
  readonly tenant: string;
  close(): Promise<void>;
}

interface KeyOptions { user?: string; tier?: Tier; mode?: KeyMode; scopes?: Permission[] }

/**
 * The bytes of a SQLite store just created and migrated by the store itself (in memory), made once per process with
 * this process's code, so always the current schema: the apps of this process start from a copy of it rather than
 * migrating a new file each (a few hundred apps a run, tens of milliseconds each). The store opens the copy as any
 * existing file (WAL mode is set on open). Migrating itself is tested on new files (test/storage).
 */
let migratedSqlite: Buffer | undefined;
function migratedSqliteBytes(): Buffer {
  if (migratedSqlite === undefined) {
    const db = openSqlite(':memory:');
    migratedSqlite = db.serialize();
    db.close();
  }
  return migratedSqlite;
}

let tenantsMade = 0;
/** A tenant id unique within this process (test files run in separate processes, each with its own app). */
export const uniqueTenant = (label = 'tenant'): string => `${label}-${++tenantsMade}`;

/**
 * The real server (Fastify, SQLite file, services) driven through app.inject(); the hashing embedder
 * stands in for the model unless a test passes another. With MNEMO_TEST_STORE=postgres (the `postgres` vitest
 * project) the store is the PostgreSQL adapter on an in-process PGlite instead, one schema per data directory.
 */
export async function createTestApp(
  options: { env?: Record<string, string>; overrides?: ContainerOverrides; server?: Partial<ServerOptions> } = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-test-'));
  // No test simulates power loss, and fsync at every commit (the default, `full`) makes the suite much slower; the
  // default itself is tested in test/storage and by the end-to-end tests, which run `npm start` as it ships.
  // Load shedding on event-loop delay is off unless a test turns it on: a busy test machine would trip it anywhere.
  const config = loadConfig({
    MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_SQLITE_SYNCHRONOUS: 'normal', MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0', ...options.env,
  });
  const storage = options.overrides?.storage
    ?? (testStoreKind() === 'postgres' && config.databaseUrl === null ? await openTestPostgresStorage(config.databaseFile) : undefined);
  // A SQLite store in the directory made here starts as a copy of a freshly migrated one (migratedSqliteFile).
  if (!storage && config.databaseUrl === null && config.dataDir === dir) {
    writeFileSync(config.databaseFile, migratedSqliteBytes(), { mode: 0o600, flag: 'wx' });
  }
  // A PostgreSQL test store on the directory made here (deleted at close, so never reopened) is emptied for the next app.
  const recycle = storage !== undefined && !options.overrides?.storage && config.dataDir === dir;
  const container = await createContainer(config, {
    embedder: createHashingEmbedder({ dimensions: 256 }), ...options.overrides, ...(storage ? { storage } : {}),
  });
  const app = await buildServer(container, { logLevel: false, ...options.server });
  await app.ready();
  let tenant = 'acme';
  const key = async (o: KeyOptions & { tenant?: string } = {}): Promise<string> => (await container.apiKeys.create({
    tenantId: o.tenant ?? tenant, userId: o.user ?? 'user-1', tier: o.tier ?? 'enterprise', mode: o.mode ?? 'live',
    scopes: o.scopes,
  })).key;
  return {
    app,
    container,
    key,
    async freshTenant(o = {}) {
      tenant = uniqueTenant();
      return key(o);
    },
    get tenant() {
      return tenant;
    },
    async close() {
      await app.close();
      await container.close();
      rmSync(dir, { recursive: true, force: true });
      if (recycle) await recycleTestPostgresStorage(config.databaseFile);
    },
  };
}

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const json = (res: LightMyRequestResponse): Json => res.json() as Json;

/** A G1 client bound to one key. */
export function g1(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { 'x-api-key': key }), ...headers };
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: '/api/v1/memories', headers: h, payload: body as object }),
    get: (id: string) => app.inject({ method: 'GET', url: `/api/v1/memories/${encodeURIComponent(id)}`, headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PUT', url: `/api/v1/memories/${encodeURIComponent(id)}`, headers: h, payload: body as object }),
    delete: (id: string) => app.inject({ method: 'DELETE', url: `/api/v1/memories/${encodeURIComponent(id)}`, headers: h }),
    list: (query = '') => app.inject({ method: 'GET', url: `/api/v1/memories${query ? `?${query}` : ''}`, headers: h }),
    search: (body: unknown) => app.inject({ method: 'POST', url: '/api/v1/memories/search', headers: h, payload: body as object }),
  };
}

/**
 * One app shared by the tests of a file that need nothing special: built on first use, switched to a fresh tenant
 * for each caller, closed once after the file. Tests that need their own configuration, clock or embedder still
 * build their own app with createTestApp (and close it themselves).
 */
export function sharedTestApp(options: Parameters<typeof createTestApp>[0] = {}) {
  let app: TestApp | undefined;
  const fresh = async (): Promise<TestApp> => {
    app ??= await createTestApp(options);
    await app.freshTenant();
    return app;
  };
  return Object.assign(fresh, {
    /** Whether `t` is this shared app (which a test must not close). */
    owns: (t: TestApp | undefined): boolean => t !== undefined && t === app,
    async close(): Promise<void> {
      await app?.close();
      app = undefined;
    },
  });
}
