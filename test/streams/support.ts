import { request, type IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';
import type { ContainerOverrides } from '../../src/app/container.ts';
import type { ServerOptions } from '../../src/app/server.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

/** A test app listening on 127.0.0.1 (a real socket, as streams need). */
export interface LiveApp extends TestApp {
  url: string;
  wsUrl: string;
}

export async function startLiveApp(
  overrides: ContainerOverrides = {}, env: Record<string, string> = {}, server: Partial<ServerOptions> = {},
): Promise<LiveApp> {
  const t = await createTestApp({ overrides, env, server });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  // Assigned onto the app itself, not spread: `tenant` is a getter that must stay live.
  return Object.assign(t, { url: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}` });
}

export interface SseFrame {
  event?: string;
  id?: string;
  data?: Json;
  /** The raw data line, for checks on the exact text. */
  rawData?: string;
  retry?: number;
  comment?: string;
}

/** Parses SSE text into frames; returns the frames and what is left of an unfinished one. */
export function parseFrames(text: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const blocks = text.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const f: SseFrame = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) f.comment = line.slice(1).trim();
      else if (line.startsWith('event: ')) f.event = line.slice(7);
      else if (line.startsWith('id: ')) f.id = line.slice(4);
      else if (line.startsWith('data: ')) {
        f.rawData = line.slice(6);
        f.data = JSON.parse(f.rawData) as Json;
      } else if (line.startsWith('retry: ')) f.retry = Number(line.slice(7));
      else if (line !== '') throw new Error(`unexpected SSE line: ${line}`);
    }
    frames.push(f);
  }
  return { frames, rest };
}

export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every frame so far (comments and retry hints included). */
  frames: SseFrame[];
  /** Frames with an event type, in order. */
  events(type?: string): SseFrame[];
  /** Waits for a frame matching `pred` (including ones already received after `from`). */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** The body when the answer was not a stream (errors). */
  body(): Promise<string>;
  /** Everything received so far, as text. */
  text(): string;
  close(): void;
}

/** Opens an SSE request with node:http and collects frames as they arrive. */
export function openStream(url: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const frames: SseFrame[] = [];
      const waiters: { pred: (f: SseFrame) => boolean; resolve: (f: SseFrame) => void }[] = [];
      let text = '';
      let raw = '';
      let endResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => { endResolve = r; });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) return;
        const parsed = parseFrames(text + chunk);
        text = parsed.rest;
        for (const f of parsed.frames) {
          frames.push(f);
          for (const w of [...waiters]) {
            if (w.pred(f)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(f);
            }
          }
        }
      });
      res.on('end', () => endResolve());
      res.on('close', () => endResolve());
      res.on('error', () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        events: (type) => frames.filter((f) => f.event !== undefined && (type === undefined || f.event === type)),
        waitFor(pred, timeoutMs = 5000) {
          const found = frames.find(pred);
          if (found) return Promise.resolve(found);
          return new Promise((res2, rej) => {
            const timer = setTimeout(() => rej(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames.map((f) => f.event ?? f.comment))}`)), timeoutMs);
            waiters.push({ pred, resolve: (f) => { clearTimeout(timer); res2(f); } });
          });
        },
        ended,
        body: async () => { await ended; return raw; },
        text: () => raw,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A G1 client over real HTTP. */
export function g1Http(base: string, key: string, headers: Record<string, string> = {}) {
  const h = { 'x-api-key': key, ...headers };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method, headers: body === undefined ? h : { ...h, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as Json;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    create: async (body: Json) => (await call('POST', '/api/v1/memories', body)).data as Json,
    update: async (id: string, body: Json) => (await call('PUT', `/api/v1/memories/${id}`, body)).data as Json,
    delete: (id: string) => call('DELETE', `/api/v1/memories/${id}`),
    search: (body: Json) => call('POST', '/api/v1/memories/search', body),
  };
}

/** A WebSocket client that keeps every message and can wait for one. */
export interface WsClient {
  socket: WebSocket;
  messages: Json[];
  send(message: unknown): void;
  waitFor(pred: (m: Json) => boolean, timeoutMs?: number): Promise<Json>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function openWs(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const messages: Json[] = [];
    const waiters: { pred: (m: Json) => boolean; resolve: (m: Json) => void }[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
    socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Json;
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    socket.once('error', reject);
    socket.once('open', () => resolve({
      socket,
      messages,
      send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
      waitFor(pred, timeoutMs = 5000) {
        const found = messages.find(pred);
        if (found) return Promise.resolve(found);
        return new Promise((res, rej) => {
          const timer = setTimeout(() => rej(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`)), timeoutMs);
          waiters.push({ pred, resolve: (m) => { clearTimeout(timer); res(m); } });
        });
      },
      closed,
      close: () => socket.close(),
    }));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `condition` holds (checked every few milliseconds); fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition();) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
