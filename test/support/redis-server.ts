import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A throwaway `redis-server` on a free loopback port: no persistence, stopped by `stop()`. */
export interface TestRedis {
  url: string;
  port: number;
  /** A new client of this server; closed by `stop()`. */
  client(): Redis;
  stop(): Promise<void>;
}

const BINARY = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const READY_TIMEOUT_MS = 10_000;

/**
 * Fails (never skips) when `redis-server` is missing: CI installs it (README, "Test it"), so a missing binary is a
 * broken environment, not a reason to pass silently.
 */
function assertInstalled(): void {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `${BINARY} is not installed (or not runnable): the Redis adapter tests need the Debian package. ` +
      'Install it with `apt-get update && apt-get install -y redis-server` (README.md, "Test it").',
    );
  }
}

/** A port nobody listens on right now: redis-server does not accept `--port 0`. */
async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function waitForPong(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${log()}`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => { /* not up yet */ });
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // Not listening yet: try again shortly.
    } finally {
      probe.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms: ${log()}`);
}

export async function startRedisServer(): Promise<TestRedis> {
  assertInstalled();
  // Another process may take the port between the probe and the start: retry on a fresh one.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawn(BINARY, [
      '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-4000); });
    child.stderr?.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-4000); });
    try {
      await waitForPong(port, child, () => output);
    } catch (err) {
      lastError = err;
      child.kill('SIGKILL');
      continue;
    }
    const clients: Redis[] = [];
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      client() {
        const c = new Redis({ port, host: '127.0.0.1' });
        clients.push(c);
        return c;
      },
      async stop() {
        for (const c of clients) c.disconnect();
        if (child.exitCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      },
    };
  }
  throw lastError;
}
