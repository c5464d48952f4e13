import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { KeyMode } from '../../src/core/scope.ts';
import { bearer, openStream, openWs, startLiveApp, type LiveApp, type SseClient, type WsClient } from '../streams/support.ts';
import type { Json, TestApp } from '../support/test-app.ts';
import type { Receiver } from '../webhooks/support.ts';

/**
 * The actors of the isolation property: two tenants whose names collide as prefixes (and as LIKE patterns: `%`),
 * a test-mode key of the first, and the same workspace names in both. Every actor's user id is the same too, so
 * nothing but the tenant, mode and workspace can keep them apart.
 */
export interface Actor {
  name: string;
  tenant: string;
  mode: KeyMode;
  workspace: string;
  /** Whether requests name the workspace in X-Workspace-ID (else they rely on the default). */
  explicitWorkspace: boolean;
}

export const TENANT_A = 'acme';
export const TENANT_B = 'acme%';
export const USER = 'user-1';

export const ACTORS: readonly Actor[] = [
  { name: 'A.live.default', tenant: TENANT_A, mode: 'live', workspace: 'default', explicitWorkspace: false },
  { name: 'A.live.team', tenant: TENANT_A, mode: 'live', workspace: 'team', explicitWorkspace: true },
  { name: 'A.test.default', tenant: TENANT_A, mode: 'test', workspace: 'default', explicitWorkspace: false },
  { name: 'B.live.default', tenant: TENANT_B, mode: 'live', workspace: 'default', explicitWorkspace: true },
  { name: 'B.live.team', tenant: TENANT_B, mode: 'live', workspace: 'team', explicitWorkspace: true },
];

/** Tenant + mode: what a key (and a G10 webhook) belongs to. */
export const keyOf = (a: Actor): string => `${a.tenant}/${a.mode}`;
export const KEY_NAMES = [...new Set(ACTORS.map(keyOf))];

/** An actor bound to its key: headers for the X-API-Key surfaces (G1, topics, G10) and the Bearer ones. */
export interface BoundActor extends Actor {
  index: number;
  key: string;
  keyId: string;
  apiKeyHeaders: Record<string, string>;
  bearerHeaders: Record<string, string>;
}

export async function bindActors(t: TestApp): Promise<BoundActor[]> {
  const keys = new Map<string, { key: string; keyId: string }>();
  for (const a of ACTORS) {
    if (keys.has(keyOf(a))) continue;
    const { key, record } = await t.container.apiKeys.create({ tenantId: a.tenant, userId: USER, tier: 'enterprise', mode: a.mode });
    keys.set(keyOf(a), { key, keyId: record.id });
  }
  return ACTORS.map((a, index) => {
    const { key, keyId } = keys.get(keyOf(a))!;
    const ws: Record<string, string> = a.explicitWorkspace ? { 'x-workspace-id': a.workspace } : {};
    return { ...a, index, key, keyId, apiKeyHeaders: { 'x-api-key': key, ...ws }, bearerHeaders: { ...bearer(key), ...ws } };
  });
}

/** One request through the real stack (inject); JSON bodies only. */
export async function call(app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string,
  headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Json; raw: string }> {
  const res = await app.inject({
    method, url, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  const raw = res.body;
  let parsed: Json = {};
  try {
    parsed = JSON.parse(raw) as Json;
  } catch {
    // Not JSON (an SSE answer): the caller reads `raw`.
  }
  return { status: res.statusCode, body: parsed, raw };
}

/** The listeners of one run: a G8 stream and a G9 webhook per actor, a live-search socket for two, a G10 webhook per key. */
export interface Listeners {
  streams: SseClient[];
  /** Live-search sockets by actor index, each with one subscription that every memory matches (threshold 0). */
  sockets: Map<number, WsClient>;
  g9Hooks: string[];
  g10Hooks: Map<string, string>;
  /** The receiver paths of this run's webhooks. */
  g9Path: (actor: number) => string;
  g10Path: (key: string) => string;
  close(): void;
}

export const LIVE_SEARCH_ACTORS = [0, 3];

export async function openListeners(t: LiveApp, actors: BoundActor[], receiver: Receiver, run: number): Promise<Listeners> {
  const g9Path = (i: number) => `/run-${run}/g9/${encodeURIComponent(actors[i]!.name)}`;
  const g10Path = (k: string) => `/run-${run}/g10/${encodeURIComponent(k)}`;
  const g9Hooks: string[] = [];
  for (const a of actors) {
    const res = await call(t.app, 'POST', '/api/v1/webhooks', a.bearerHeaders, {
      url: `${receiver.url}${g9Path(a.index)}`,
      events: ['memory.created', 'memory.updated', 'memory.deleted', 'embedding.generated', 'search.performed'],
    });
    expect(res.status, res.raw).toBe(201);
    g9Hooks.push(res.body.data.id as string);
  }
  const g10Hooks = new Map<string, string>();
  for (const a of actors) {
    if (g10Hooks.has(keyOf(a))) continue;
    const res = await call(t.app, 'POST', '/v1/webhooks', a.apiKeyHeaders, { url: `${receiver.url}${g10Path(keyOf(a))}`, events: ['transfer.completed'] });
    expect(res.status, res.raw).toBe(201);
    g10Hooks.set(keyOf(a), res.body.data.id as string);
  }
  const streams: SseClient[] = [];
  for (const a of actors) {
    const s = await openStream(`${t.url}/api/v1/stream`, a.bearerHeaders);
    expect(s.status).toBe(200);
    streams.push(s);
  }
  const sockets = new Map<number, WsClient>();
  for (const i of LIVE_SEARCH_ACTORS) {
    const ws = await openWs(`${t.wsUrl}/v1/search/live`, actors[i]!.bearerHeaders);
    ws.send({ type: 'subscribe', query: 'notes about the team', threshold: 0 });
    await ws.waitFor((m) => m.type === 'subscribed');
    sockets.set(i, ws);
  }
  // The streams are tailing once their opening `retry:` hint has arrived.
  await Promise.all(streams.map((s) => s.waitFor((f) => f.retry !== undefined)));
  return {
    streams, sockets, g9Hooks, g10Hooks, g9Path, g10Path,
    close() {
      for (const s of streams) s.close();
      for (const ws of sockets.values()) ws.close();
    },
  };
}

export async function startWorld(): Promise<LiveApp> {
  return startLiveApp({}, { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' });
}

/** Runs the delivery worker until nothing is due (each tick awaits its HTTP attempts). */
export async function drainDeliveries(t: TestApp): Promise<void> {
  // search.performed events reach the outbox in the search recorder's batches: write what is queued first.
  await t.container.search.flushLog();
  for (let i = 0; i < 1000; i++) if ((await t.container.deliveries.tick()) === 0) return;
  throw new Error('deliveries did not drain');
}
