import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import { keyringFrom } from '../../src/adapters/secrets/master-keyring.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { createHttpWebhookSender, type HttpSenderOptions } from '../../src/adapters/webhooks/http.sender.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { NewEvent } from '../../src/core/events/event.types.ts';
import type { Keyring } from '../../src/core/secrets/envelope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { createDeliveryWorker, type DeliveryWorkerOptions } from '../../src/core/webhooks/delivery-worker.ts';
import type { WebhookRepository } from '../../src/core/webhooks/webhook.repository.ts';
import { sealWebhookSecret } from '../../src/core/webhooks/webhook-secret.ts';
import { DEFAULT_G9_RETRY, type Webhook } from '../../src/core/webhooks/webhook.types.ts';

/** One request as a receiver saw it: the raw body exactly as sent, and lower-cased headers. */
export interface Received {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export type Responder = (req: IncomingMessage, res: ServerResponse, received: Received) => void | Promise<void>;

/** A real HTTP receiver on 127.0.0.1 that records every request and answers with `respond` (default 200). */
export async function startReceiver(respond: Responder = (_q, res) => { res.end('ok'); }) {
  const received: Received[] = [];
  let responder = respond;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      const r = { method: req.method ?? '', url: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      void responder(req, res, r);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    respondWith(r: Responder) { responder = r; },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The spec's secret form: `whsec_` + base64 of 24 random bytes. */
export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export const TENANT = { tenantId: 'tenant-w', mode: 'live' as const, workspace: 'default' };

/** A webhook with the plaintext of its signing secret, which the tests verify signatures with (storage keeps it sealed). */
export type TestHook = Webhook & { secret: string };

/** A keyring of one random master key. */
export const testKeyring = (): Keyring => keyringFrom([randomBytes(32)]);

/** Stores a test webhook as the service would: its secret sealed with `keyring`. */
export const insertHook = (webhooks: Pick<WebhookRepository, 'insert'>, keyring: Keyring, hook: TestHook): Promise<void> =>
  webhooks.insert(hook, sealWebhookSecret(keyring, hook, hook.secret));

export function g9Hook(url: string, over: Partial<TestHook> = {}): TestHook {
  const at = new Date(Date.UTC(2026, 0, 1));
  return {
    id: `webhook_${randomUUID().replace(/-/g, '')}`, kind: 'g9', scope: { ...TENANT }, url, events: ['memory.created'],
    secret: newSecret(), description: null, status: 'active', retryPolicy: { ...DEFAULT_G9_RETRY }, filters: {},
    createdAt: at, updatedAt: at, lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
    ...over,
  };
}

export function g10Hook(url: string, over: Partial<TestHook> = {}): TestHook {
  return g9Hook(url, {
    id: `whk_${randomUUID().replace(/-/g, '')}`, kind: 'g10', scope: { tenantId: TENANT.tenantId, mode: 'live', workspace: null },
    events: ['transfer.completed'], ...over,
  });
}

/** A G11 webhook: the secrets component's events, per tenant and mode. */
export function g11Hook(url: string, over: Partial<TestHook> = {}): TestHook {
  return g10Hook(url, { id: `whk_${randomUUID().replace(/-/g, '')}`, kind: 'g11', events: ['secret.created'], ...over });
}

export function transferEvent(clock: ManualClock, data: Record<string, unknown> = {}): NewEvent {
  return {
    id: `evt_${randomUUID().replace(/-/g, '')}`, type: 'transfer.completed',
    scope: { tenantId: TENANT.tenantId, mode: 'live', workspace: null }, createdAt: clock.now(),
    data: { id: 'tr_1', reference: 'ref-1', amount: 125_00, fee: 50, currency: 'NGN', status: 'completed', ...data },
  };
}

/**
 * A real SQLite store on a temp file, a ManualClock, an in-memory rate limiter and a worker whose HTTP sender
 * may reach 127.0.0.0/8 (the receivers of these tests).
 */
export function createRig(options: { worker?: DeliveryWorkerOptions; sender?: Partial<HttpSenderOptions>; start?: Date | number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-webhooks-'));
  const storage: Storage = createSqliteStorage({ file: join(dir, 'mnemo.db') });

  const clock = new ManualClock(options.start ?? Date.UTC(2026, 0, 1));
  const limiter = createMemoryRateLimiter(clock);
  const sender = createHttpWebhookSender({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 2000, ...options.sender });
  const keyring = testKeyring();
  const worker = createDeliveryWorker({
    webhooks: storage.webhooks, events: storage.events, sender, limiter, clock, keyring: () => keyring, options: options.worker,
  });
  const file = join(dir, 'mnemo.db');
  return {
    storage, clock, limiter, sender, worker, keyring,
    /** Stores a webhook with its secret sealed under the rig's keyring. */
    insert: (hook: TestHook) => insertHook(storage.webhooks, keyring, hook),
    /** Delivery rows as stored (the port has no query for them; a read-only second connection does). */
    deliveryRows(): DeliveryRow[] {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare('SELECT id, webhook_id, state, attempts, last_status, last_error, next_attempt_at FROM webhook_deliveries ORDER BY seq').all() as DeliveryRow[];
      } finally {
        db.close();
      }
    },
    async close() {
      await worker.stop();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type Rig = ReturnType<typeof createRig>;

export interface DeliveryRow {
  id: string; webhook_id: string; state: string; attempts: number; last_status: number | null; last_error: string | null;
  next_attempt_at: number;
}

/** Polls until `check` holds (for things that happen on real sockets). */
export const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};
