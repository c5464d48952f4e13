import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startCompiledServer, type StartedServer } from '../support/npm-start.ts';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/**
 * The outbox under crashes: the server is killed with SIGKILL several times while memories are being created,
 * restarted on the same data, and every memory.created event of a request that was acknowledged (201) must reach
 * the receiver at least once, duplicates carrying the same event id.
 */
describe('durable webhook delivery across SIGKILL', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-crash-'));
  let receiver: Server;
  const received = new Map<string, { memoryId: string; attempts: number[] }>();
  let requestsSeen = 0;
  afterAll(async () => {
    await new Promise<void>((r) => receiver?.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const env = {
    ...process.env, MNEMO_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', MNEMO_EMBEDDINGS: 'hashing',
    MNEMO_LOG_LEVEL: 'warn', MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    // Load shedding is tested on its own (test/cross/load-shedding.test.ts); here a busy test machine would turn
    // writes into 503s that say nothing about durability.
    MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0',
    // A delivery claimed by a killed process is sent again once its lease ends, 3 × this timeout + 2 s (17 s with the
    // default 5 s, most of this test's time): the receiver is on loopback and answers at once, so 1 s is plenty, and a
    // timed-out attempt would only be retried.
    MNEMO_WEBHOOK_TIMEOUT_MS: '1000',
  };

  /**
   * The server process itself (not npm), so SIGKILL hits it and nothing else gets a chance to clean up: the compiled
   * server that `npm start` runs (dist/, brought up to date first as `npm start` does: see the test). Compiled, each
   * of the five starts skips tsx's loader and transforms of src/ (about a quarter of a start, measured).
   */
  const start = (): Promise<StartedServer> => startCompiledServer(env);

  it('delivers every acknowledged memory.created at least once', async () => {
    // A receiver that fails the first attempt of every fourth event, so retries happen across crashes too.
    const failedOnce = new Set<string>();
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        requestsSeen++;
        const event = JSON.parse(body) as { id: string; type: string; attempt: number; data: { id: string } };
        if (requestsSeen % 4 === 0 && !failedOnce.has(event.id)) {
          failedOnce.add(event.id);
          res.writeHead(500).end();
          return;
        }
        const seen = received.get(event.id) ?? { memoryId: event.data.id, attempts: [] };
        expect(seen.memoryId).toBe(event.data.id);
        seen.attempts.push(event.attempt);
        received.set(event.id, seen);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    // What `npm start` does before it starts the server: compile src/ into dist/ unless dist/ matches it already.
    await run(process.execPath, ['scripts/build.js', '--if-stale'], { cwd: root });
    const { stdout } = await run(process.execPath, ['bin/mnemo.js', 'keys', 'create', '--tier', 'enterprise', '--json'], { cwd: root, env });
    const key = (JSON.parse(stdout) as { key: string }).key;
    const headers = { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' };

    let server = await start();
    const hook = await fetch(`${server.url}/api/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: hookUrl, events: ['memory.created'] }) });
    expect(hook.status).toBe(201);

    const acknowledged = new Set<string>();
    let n = 0;
    for (let round = 0; round < 4; round++) {
      // Writes in flight while the process is killed part-way through the round.
      const writes: Promise<void>[] = [];
      const killAfter = 15 + round * 5;
      let acknowledgedThisRound = 0;
      for (let i = 0; i < 40; i++) {
        const title = `crash round ${round} note ${n++}`;
        writes.push(fetch(`${server.url}/api/v1/memories`, { method: 'POST', headers, body: JSON.stringify({ title, content: title }) })
          .then(async (res) => {
            if (res.status === 201) {
              acknowledged.add(((await res.json()) as { data: { id: string } }).data.id);
              acknowledgedThisRound++;
            }
          })
          .catch(() => undefined));
        if (i === killAfter) {
          // However slow the machine (each commit waits for its fsync), some writes of the round are acknowledged first.
          for (const until = Date.now() + 10_000; acknowledgedThisRound < 8 && Date.now() < until;) await new Promise((r) => setTimeout(r, 5));
          server.child.kill('SIGKILL');
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(writes);
      await server.exited;
      server = await start();
    }
    // Some writes of every round were acknowledged before the kill, some were cut off by it.
    expect(acknowledged.size).toBeGreaterThanOrEqual(30);
    expect(acknowledged.size).toBeLessThan(n);

    // After the last restart the worker drains what every crash left behind.
    const deadline = Date.now() + 60_000;
    const deliveredIds = () => new Set([...received.values()].map((r) => r.memoryId));
    while (Date.now() < deadline && [...acknowledged].some((id) => !deliveredIds().has(id))) {
      await new Promise((r) => setTimeout(r, 250));
    }
    server.child.kill('SIGTERM');
    await server.exited;

    const missing = [...acknowledged].filter((id) => !deliveredIds().has(id));
    expect(missing).toEqual([]);
    expect(failedOnce.size).toBeGreaterThan(0);
    // One event id per memory: a duplicate is the same event again, never a new one.
    const eventsPerMemory = new Map<string, number>();
    for (const r of received.values()) eventsPerMemory.set(r.memoryId, (eventsPerMemory.get(r.memoryId) ?? 0) + 1);
    expect([...eventsPerMemory.values()].every((count) => count === 1)).toBe(true);
  }, 180_000);
});
