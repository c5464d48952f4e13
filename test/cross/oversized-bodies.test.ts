import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveApp, type LiveApp } from '../streams/support.ts';

const MIB = 1024 * 1024;

/**
 * Node's global fetch (undici) in its own process, as a real client is: one process for the file (a start and a
 * 20 MB body built once rather than per case), reading one case a line on stdin and printing one line of
 * `{status, headers, body}` or `{error}` per attempt. Without draining, whether the client reads the answer or fails
 * with EPIPE is a race it loses about half the time, so each case is sent several times over the same connection pool.
 * The body repeats `size` characters twice (as `content` and as `text`). `chunked` sends the body as a stream
 * (Transfer-Encoding: chunked, no Content-Length).
 */
const CLIENT = `
import { createInterface } from 'node:readline';
const bodies = new Map();
const bodyOf = (size) => {
  if (!bodies.has(size)) bodies.set(size, JSON.stringify({ title: 't', content: 'x'.repeat(size), text: 'x'.repeat(size), operations: [] }));
  return bodies.get(size);
};
for await (const line of createInterface({ input: process.stdin })) {
  const [url, size, headers, chunked, times] = JSON.parse(line);
  const text = bodyOf(size);
  const stream = () => new ReadableStream({ start(c) { for (let i = 0; i < text.length; i += 1 << 20) c.enqueue(new TextEncoder().encode(text.slice(i, i + (1 << 20)))); c.close(); } });
  const results = [];
  for (let i = 0; i < times; i++) {
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: chunked ? stream() : text, duplex: 'half' });
      results.push({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
    } catch (e) {
      results.push({ error: String(e.cause?.code ?? e.cause?.message ?? e.message) });
    }
  }
  console.log(JSON.stringify(results));
}`;

interface Attempt { status?: number; headers?: Record<string, string>; body?: string; error?: string }

/** The file's client process: `send` posts one case and resolves with its attempts (the cases go one at a time). */
function startFetchClient() {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], { stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async send(args: unknown[]): Promise<Attempt[]> {
      child.stdin.write(`${JSON.stringify(args)}\n`);
      const line = await lines.next();
      if (line.done) throw new Error(`the fetch client exited: ${stderr}`);
      return JSON.parse(line.value) as Attempt[];
    },
    async close(): Promise<void> {
      child.stdin.end();
      await exited;
    },
  };
}
let client: ReturnType<typeof startFetchClient>;

/** Posts a JSON body of about `size` bytes (twice that with `text` for G2) `times` times; every attempt must be answered. */
async function postWithFetch(url: string, size: number, headers: Record<string, string>, options: { chunked?: boolean; times?: number } = {}) {
  const attempts = await client.send([url, size, headers, options.chunked ?? false, options.times ?? 4]);
  expect(attempts.map((a) => a.error ?? a.status)).toEqual(attempts.map(() => expect.any(Number)));
  return attempts.map((a) => ({ status: a.status!, headers: a.headers!, body: JSON.parse(a.body!) as Record<string, unknown> }));
}

describe('bodies over the limit, sent with Node fetch: the 413 is read in the surface envelope', () => {
  let live: LiveApp;
  let key: string;
  beforeAll(async () => {
    client = startFetchClient();
    live = await startLiveApp();
    key = await live.key();
  });
  afterAll(async () => {
    await client?.close();
    await live?.close();
  });

  it('G1: a 20 MB memory create answers 413 CONTENT_TOO_LARGE', async () => {
    for (const res of await postWithFetch(`${live.url}/api/v1/memories`, 10 * MIB, { 'x-api-key': key })) {
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ success: false, error: { code: 'CONTENT_TOO_LARGE', request_id: res.headers['x-request-id'] } });
    }
  });

  it('G6: an 11 MB batch answers 413 BATCH_TOO_LARGE', async () => {
    for (const res of await postWithFetch(`${live.url}/api/v1/batch`, 5.5 * MIB, { authorization: `Bearer ${key}` })) {
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ success: false, error: { code: 'BATCH_TOO_LARGE', details: { max_bytes: 10 * MIB } } });
    }
  });

  it('G2: a 20 MB create answers 413 PAYLOAD_TOO_LARGE, also when sent chunked without Content-Length', async () => {
    for (const chunked of [false, true]) {
      for (const res of await postWithFetch(`${live.url}/api/v1/memory`, 10 * MIB, { authorization: `Bearer ${key}` }, { chunked })) {
        expect(res.status).toBe(413);
        expect(res.body).toMatchObject({ error: 'PAYLOAD_TOO_LARGE', details: { field: 'body' } });
      }
    }
  });

  it('a 401 answered before a large body is read reaches the client too', async () => {
    for (const res of await postWithFetch(`${live.url}/api/v1/memories`, 3 * MIB, { 'x-api-key': 'mnemo_live_wrong' })) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    }
  });

  it('stays healthy afterwards, and still creates a memory of normal size', async () => {
    const health = await fetch(`${live.url}/health`);
    expect(health.status).toBe(200);
    const res = await fetch(`${live.url}/api/v1/memories`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ title: 't', content: 'fine' }),
    });
    expect(res.status).toBe(201);
  });

  /** Writes a raw HTTP/1.1 request and collects everything the server sends until it closes the connection. */
  async function rawExchange(head: string[], ...parts: (Buffer | string)[]): Promise<string> {
    const socket = connect(Number(new URL(live.url).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => { received += chunk; });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // The server answers (or closes) without waiting for the rest of an oversized body.
    const answered = new Promise<void>((resolve) => { socket.once('data', () => resolve()); void closed.then(resolve); });
    socket.write([...head, 'Host: 127.0.0.1', 'Connection: close', '', ''].join('\r\n'));
    for (const [i, part] of parts.entries()) {
      socket.write(part);
      if (i === parts.length - 1) break;
      // The next part goes once the server has answered; a server that waits for more gets it after a bound, and
      // the test still sees what it answers then.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([answered, new Promise((resolve) => { bound = setTimeout(resolve, 1000); })]);
      clearTimeout(bound);
    }

    await closed;
    return received;
  }

  it('does not read a declared body beyond the drain bound: it answers 413 at once and closes', async () => {
    // 1 GiB declared, 64 KiB sent: the answer and the close come without the client sending the rest.
    const received = await rawExchange(['POST /api/v1/memories HTTP/1.1', `X-API-Key: ${key}`, 'Content-Type: application/json',
      `Content-Length: ${1024 * MIB}`], Buffer.alloc(64 * 1024, 'x'));
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('"CONTENT_TOO_LARGE"');
  });

  it('G4: a chunked GET body over 64 KiB answers 413 in the G4 envelope', async () => {
    const piece = `${'x'.repeat(16 * 1024)}`;
    const chunks = Array.from({ length: 8 }, () => `${piece.length.toString(16)}\r\n${piece}\r\n`).join('');
    // Over the limit in the first part; the end of the body follows once the server has stopped reading.
    const received = await rawExchange(['GET /v1/search?q=deploy HTTP/1.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json',
      'Transfer-Encoding: chunked'], chunks, chunks, '0\r\n\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('"PAYLOAD_TOO_LARGE"');
  });
});
