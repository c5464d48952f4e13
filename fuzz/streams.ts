import { request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';
import type { FuzzCase } from './cases.ts';
import type { FuzzKeys } from './fixtures.ts';
import type { JsonSchema, Operation } from './openapi.ts';
import type { Answer } from './oracle.ts';
import { HangError } from './transport.ts';

const LIVE_MESSAGE: JsonSchema = {
  anyOf: [
    {
      type: 'object', required: ['type', 'query'],
      properties: {
        type: { const: 'subscribe' }, query: { type: 'string' }, threshold: { type: 'number', minimum: 0, maximum: 1 },
        filters: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } },
      },
    },
    { type: 'object', required: ['type'], properties: { type: { const: 'unsubscribe' }, subscription_id: { type: 'string' } } },
    { type: 'object', required: ['type'], properties: { type: { const: 'ping' } } },
  ],
};

/**
 * The WebSocket routes, which the OpenAPI document hides (docs/api.md describes them), as operations: their
 * query parameters, and the client message as the "body" (sent as a text frame).
 */
export const WS_ROUTES: Record<string, (keys: FuzzKeys) => Operation> = {
  'WS /v1/search/live': (keys) => ({
    method: 'WS', path: '/v1/search/live', credential: 'bearer', body: LIVE_MESSAGE,
    parameters: [
      { name: 'access_token', in: 'query', schema: { enum: keys.pool } },
      { name: 'workspace', in: 'query', schema: { enum: ['default', 'fuzz-ws'] } },
    ],
  }),
  'WS /api/v1/analytics/stream': (keys) => ({
    method: 'WS', path: '/api/v1/analytics/stream', credential: 'bearer',
    // Client messages are ignored; send some anyway.
    body: { type: 'object', properties: { type: { type: 'string' } } },
    parameters: [
      { name: 'access_token', in: 'query', schema: { enum: keys.pool } },
      { name: 'interval', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 3600 } },
    ],
  }),
};

const ACCEPTS = ['text/event-stream', 'text/event-stream', 'text/event-stream', 'text/event-stream', '*/*', 'application/json', 'text/event-stream;q=0, */*', '%zz'];

/**
 * An SSE request: the answer's head, then its body until it ends (an error) or its first bytes (a stream, which is
 * then closed). Either must come within the bound.
 */
export function fuzzSseCase(baseUrl: string, c: FuzzCase, boundMs: number): Promise<Answer> {
  const base = new URL(baseUrl);
  const r = c.request;
  const accept = ACCEPTS[(r.url.length + (r.body?.length ?? 0)) % ACCEPTS.length]!;
  if (accept !== 'text/event-stream') c.notes.push(`Accept: ${accept}`);
  return new Promise<Answer>((resolve, reject) => {
    const started = performance.now();
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
      req.destroy();
    };
    const timer = setTimeout(() => finish(() => reject(new HangError(`no answer within ${boundMs} ms`))), boundMs);
    const req = httpRequest({
      host: base.hostname, port: base.port, method: r.method, path: r.url, agent: false,
      headers: { ...r.headers, accept, ...(r.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(r.body)) }) },
    }, (res) => {
      let body = '';
      const answer = () => ({ status: res.statusCode ?? 0, body, ms: performance.now() - started });
      const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (streaming) finish(() => resolve(answer()));
      });
      res.on('end', () => finish(() => resolve(answer())));
      res.on('error', (err) => finish(() => reject(err)));
    });
    req.on('error', (err) => finish(() => reject(err)));
    req.end(r.body);
  });
}

/** Larger than the server's WebSocket maxPayload (64 KiB): ws closes with 1009, which is the client's mistake. */
const OVERSIZED_FRAME = 'x'.repeat(64 * 1024 + 1);

/**
 * A WebSocket session: the upgrade (refused with a status, or accepted), the case's message as a text frame (in
 * about one case of eight a frame over the size limit instead), a binary frame, then a ping that a live socket must
 * answer. The answer's "status" is the refusal's HTTP status, or 101; a close with 1011 (internal error) counts as a
 * 500. Everything the server sent is the body.
 */
export function fuzzWsCase(baseUrl: string, c: FuzzCase, boundMs: number): Promise<Answer> {
  const r = c.request;
  const headers = { ...r.headers };
  delete headers['content-type'];
  const oversized = (r.url.length + (r.body?.length ?? 0)) % 8 === 0;
  if (oversized) c.notes.push(`a text frame of ${OVERSIZED_FRAME.length} bytes`);
  return new Promise<Answer>((resolve, reject) => {
    const started = performance.now();
    const received: string[] = [];
    let status = 101;
    let settled = false;
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${r.url}`, { headers, handshakeTimeout: boundMs });
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      ws.terminate();
    };
    const answer = () => ({ status, body: received.join('\n'), ms: performance.now() - started });
    const timer = setTimeout(() => finish(() => reject(new HangError(`session not over within ${boundMs} ms; got ${received.join(' ').slice(0, 200)}`))), boundMs);
    ws.on('unexpected-response', (_req, res) => {
      status = res.statusCode ?? 0;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => { received.push(body); finish(() => resolve(answer())); });
    });
    ws.on('open', () => {
      if (oversized) ws.send(OVERSIZED_FRAME);
      else if (r.body !== undefined) ws.send(r.body.toString());
      ws.send(Buffer.from([0xc0, 0xaf, 0x00]));
      ws.send(JSON.stringify({ type: 'ping' }));
    });
    ws.on('message', (data) => {
      const text = String(data);
      received.push(text);
      // The live socket answers the ping; the analytics socket ignores messages, and its summary shows it is alive.
      if (text.includes('"pong"')) finish(() => resolve(answer()));
      if (text.includes('"type":"analytics"')) setTimeout(() => finish(() => resolve(answer())), 5);
    });
    ws.on('close', (code) => {
      if (code === 1011) status = 500;
      received.push(`(closed ${code})`);
      finish(() => resolve(answer()));
    });
    ws.on('error', (err) => finish(() => (received.length > 0 || status !== 101 ? resolve(answer()) : reject(err))));
  });
}
