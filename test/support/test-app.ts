import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer, type Container, type ContainerOverrides } from '../../src/app/container.ts';
import { buildServer, type ServerOptions } from '../../src/app/server.ts';
import type { Scope, Tier } from '../../src/core/api-keys/api-key.types.ts';
import type { KeyMode } from '../../src/core/scope.ts';

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  /** Creates a key and returns its text. */
  key(options?: { tenant?: string; user?: string; tier?: Tier; mode?: KeyMode; scopes?: Scope[] }): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real server (Fastify, SQLite file, services) driven through app.inject(); the hashing embedder
 * stands in for the model unless a test passes another.
 */
export async function createTestApp(
  options: { env?: Record<string, string>; overrides?: ContainerOverrides; server?: Omit<ServerOptions, 'logLevel'> } = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-test-'));
  // No test simulates power loss, and fsync at every commit (the default, `full`) makes the suite much slower; the
  // default itself is tested in test/storage and by the end-to-end tests, which run `npm start` as it ships.
  // Load shedding on event-loop delay is off unless a test turns it on: a busy test machine would trip it anywhere.
  const config = loadConfig({
    MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_SQLITE_SYNCHRONOUS: 'normal', MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0', ...options.env,
  });
  const container = createContainer(config, { embedder: createHashingEmbedder({ dimensions: 256 }), ...options.overrides });
  const app = await buildServer(container, { logLevel: false, ...options.server });
  await app.ready();
  return {
    app,
    container,
    async key(o = {}) {
      const { key } = await container.apiKeys.create({
        tenantId: o.tenant ?? 'acme', userId: o.user ?? 'user-1', tier: o.tier ?? 'enterprise', mode: o.mode ?? 'live',
        scopes: o.scopes,
      });
      return key;
    },
    async close() {
      await app.close();
      await container.close();
      rmSync(dir, { recursive: true, force: true });
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
