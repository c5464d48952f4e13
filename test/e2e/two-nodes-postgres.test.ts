import type { PGlite } from '@electric-sql/pglite';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mnemo } from '../support/cli.ts';
import { npmStart, type StartedServer } from '../support/npm-start.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';
import { bearer, openStream, sleep, type SseClient } from '../streams/support.ts';

/** A delivery the receiver got: which event, which attempt (X-Service-Delivery), and when. */
interface Received { eventId: string; memoryId: string; attemptId: string; at: number }

/**
 * A deployment of two nodes as an operator runs it: two `npm start` processes on one PostgreSQL (PGlite with
 * pgvector, served to both nodes' connection pools by pglite-socket) and one Redis. Nothing is shared in memory:
 * whatever one node learns of the other's work comes through the database or Redis.
 */
describe('two `npm start` nodes on one PostgreSQL and one Redis', () => {
  let pglite: PGlite;
  let schema: FileDatabase | undefined;
  let database: SharedPglite;
  let redis: TestRedis;
  let receiver: Server;
  let hookUrl: string;
  let dataDir: string;
  let env: Record<string, string>;
  const nodes: StartedServer[] = [];
  const streams: SseClient[] = [];
  const received: Received[] = [];
  /** How the receiver answers the next request; by default 204 at once. */
  let answer: (req: IncomingMessage, res: ServerResponse, body: Received) => void = (_req, res) => { res.writeHead(204).end(); };

  const pidOf = (node: StartedServer): number => {
    const line = node.output().split('\n').find((l) => l.startsWith('{') && l.includes('"pid"'));
    return (JSON.parse(line!) as { pid: number }).pid;
  };
  const key = async (tenant: string, tier: string): Promise<string> => {
    const created = await mnemo(env, 'keys', 'create', '--tenant', tenant, '--tier', tier, '--json');
    expect(created.error).toBeUndefined();
    return (JSON.parse(created.stdout) as { key: string }).key;
  };
  const call = (node: StartedServer, key: string, method: string, path: string, body?: unknown) => fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

  beforeAll(async () => {
    schema = await fileDatabase();
    pglite = schema.pglite;
    database = await servePglite(pglite);
    redis = await startRedisServer();
    receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => { text += c.toString(); });
      req.on('end', () => {
        const event = JSON.parse(text) as { id: string; data: { id: string } };
        const got = { eventId: event.id, memoryId: event.data.id, attemptId: String(req.headers['x-service-delivery']), at: Date.now() };
        received.push(got);
        answer(req, res, got);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    // No data directory is used on PostgreSQL; one that does not exist proves it.
    dataDir = join(mkdtempSync(join(tmpdir(), 'mnemo-two-nodes-pg-')), 'unused');
    env = {
      MNEMO_DATABASE_URL: database.url, MNEMO_DATABASE_POOL_SIZE: '3', MNEMO_REDIS_URL: redis.url, MNEMO_DATA_DIR: dataDir,
      HOST: '127.0.0.1', PORT: '0', MNEMO_EMBEDDINGS: 'hashing', MNEMO_LOG_LEVEL: 'debug',
      MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '1500',
      // One master key for the cluster (docs/deploy.md).
      MNEMO_MASTER_KEY: randomBytes(32).toString('base64'),
      // Load shedding is tested on its own; on a busy test machine it would answer 503 to what this test counts.
      MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0',
    };
    // The CLI migrates the database first; then both nodes start at once on it.
    await key('warm-up', 'free');
    nodes.push(...await Promise.all([npmStart(env), npmStart(env)]));
  }, 120_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    for (const node of nodes) node.child.kill('SIGTERM');
    await Promise.all(nodes.map((n) => n.exited));
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await redis?.stop();
    await database?.stop();
    await schema?.release();
    if (dataDir) rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });

  it('delivers a memory created on node A to an SSE stream opened on node B within a second', async () => {
    const [a, b] = nodes as [StartedServer, StartedServer];
    const k = await key('fan-out', 'pro');
    const watcher = await openStream(`${b.url}/api/v1/stream?events=memory.created`, bearer(k));
    streams.push(watcher);
    expect(watcher.status).toBe(200);
    await watcher.waitFor((f) => f.retry !== undefined || f.comment !== undefined || f.event !== undefined);

    const sent = Date.now();
    const created = await call(a, k, 'POST', '/api/v1/memories', { title: 'Cross-node', content: 'written on node A' });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    const frame = await watcher.waitFor((f) => f.event === 'memory.created' && JSON.stringify(f.data).includes(id), 1_000);
    expect(JSON.stringify(frame.data)).toContain('written on node A');
    expect(Date.now() - sent).toBeLessThan(1_000);
  });

  it("refuses a free-tier key's 61st request in a minute on whichever node gets it", async () => {
    const [a, b] = nodes as [StartedServer, StartedServer];
    // Windows are whole minutes and the requests must share one: a run that crossed into the next minute starts again
    // with a fresh key at the start of that minute (waiting for a minute's start instead cost up to 15 s).
    let answers: Response[] = [];
    let refused: Response[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const k = await key(`rate-${attempt}`, 'free');
      answers = [];
      for (let i = 0; i < 60; i++) answers.push(await call(i % 2 ? b : a, k, 'GET', '/api/v1/memories'));
      // 30 requests on each node: neither alone has reached 60.
      refused = [await call(a, k, 'GET', '/api/v1/memories'), await call(b, k, 'GET', '/api/v1/memories')];
      if (new Set([...answers, ...refused].map((r) => r.headers.get('x-ratelimit-reset'))).size === 1) break;
    }
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(200));
    expect(new Set([...answers, ...refused].map((r) => r.headers.get('x-ratelimit-reset'))).size).toBe(1);
    for (const response of refused) {
      expect(response.status).toBe(429);
      expect(await response.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    }
  });

  it('delivers each event once while both nodes run, and after SIGKILL of the node sending one, the other sends it when the lease ends', async () => {
    const k = await key('hooks', 'enterprise');
    const hook = await call(nodes[0]!, k, 'POST', '/api/v1/webhooks', { url: hookUrl, events: ['memory.created'] });
    expect(hook.status).toBe(201);

    // Ten memories, written through both nodes; both nodes' workers claim from the one outbox.
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call(nodes[i % 2]!, k, 'POST', '/api/v1/memories', { title: `note ${i}`, content: `delivered once ${i}` });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { data: { id: string } }).data.id);
    }
    for (const until = Date.now() + 15_000; received.length < 10 && Date.now() < until;) await sleep(50);
    // No wait for late duplicates here: the count per event at the end covers these ten too, seconds later.
    expect(received.map((r) => r.memoryId).sort()).toEqual([...ids].sort());
    expect(new Set(received.map((r) => r.eventId)).size).toBe(10);

    // The next delivery: the receiver holds the request, learns from the logs which node sent it, and kills it.
    let killed: { node: StartedServer; attemptId: string } | undefined;
    answer = (req, res, got) => {
      answer = (_q, r) => { r.writeHead(204).end(); };
      void (async () => {
        let sender: StartedServer | undefined;
        for (const until = Date.now() + 1_000; !sender && Date.now() < until; await sleep(5)) {
          sender = nodes.find((n) => n.output().includes(`"attempt_id":"${got.attemptId}"`));
        }
        if (!sender) throw new Error(`no node logged attempt ${got.attemptId}`);
        process.kill(pidOf(sender), 'SIGKILL');
        killed = { node: sender, attemptId: got.attemptId };
        res.destroy();
      })();
    };
    const before = received.length;
    const creator = nodes[0]!;
    const res = await call(creator, k, 'POST', '/api/v1/memories', { title: 'crash', content: 'sent twice, once by each node' });
    expect(res.status).toBe(201);
    const crashId = ((await res.json()) as { data: { id: string } }).data.id;
    for (const until = Date.now() + 5_000; !killed && Date.now() < until;) await sleep(20);
    expect(killed, 'the held delivery was traced to a node and killed').toBeDefined();
    const killedAt = Date.now();
    await killed!.node.exited;
    const survivor = nodes.find((n) => n !== killed!.node)!;

    // The lease is 3 × 1.5 s + 2 s = 6.5 s from the claim.
    for (const until = Date.now() + 20_000; received.length < before + 2 && Date.now() < until;) await sleep(50);
    const attempts = received.slice(before);
    expect(attempts.map((r) => r.memoryId)).toEqual([crashId, crashId]);
    expect(attempts[0]!.eventId).toBe(attempts[1]!.eventId);
    expect(attempts[1]!.attemptId).not.toBe(killed!.attemptId);
    expect(survivor.output()).toContain(`"attempt_id":"${attempts[1]!.attemptId}"`);
    expect(attempts[1]!.at - killedAt).toBeGreaterThan(3_000);
    // The survivor still serves: the database session of the killed node was given up (its transaction rolled back).
    expect((await call(survivor, k, 'GET', `/api/v1/memories/${crashId}`)).status).toBe(200);
    // Apart from the crashed attempt, nothing was delivered twice.
    await sleep(500);
    const perEvent = new Map<string, number>();
    for (const r of received) perEvent.set(r.eventId, (perEvent.get(r.eventId) ?? 0) + 1);
    expect([...perEvent.values()].filter((n) => n > 1)).toEqual([2]);
  });
});
