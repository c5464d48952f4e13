import { request as httpRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { FuzzRequest } from './cases.ts';
import type { Answer } from './oracle.ts';

/** Sends a request and resolves with the answer, or rejects once `timeoutMs` passes (a hang). */
export type Transport = (r: FuzzRequest, timeoutMs: number) => Promise<Answer>;

export class HangError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new HangError(`no answer within ${ms} ms: ${what}`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

/** In process, through Fastify's inject (no socket): fast, for the npm-test run. */
export function injectTransport(app: FastifyInstance): Transport {
  return async (r, timeoutMs) => {
    const started = performance.now();
    const res = await withTimeout(app.inject({
      method: r.method as 'GET', url: r.url, headers: r.headers, ...(r.body === undefined ? {} : { payload: r.body }),
    }), timeoutMs, `${r.method} ${r.url.slice(0, 100)}`);
    return { status: res.statusCode, body: res.body, ms: performance.now() - started, headers: res.headers };
  };
}

/** Over a real socket to a server in another process, so that even a busy event loop there counts as a hang here. */
export function httpTransport(baseUrl: string): Transport {
  const base = new URL(baseUrl);
  return (r, timeoutMs) => new Promise<Answer>((resolve, reject) => {
    const started = performance.now();
    // Node sends a GET or DELETE body without Content-Length (nor chunked) unless told: the server would read it
    // as a second request. State the length, as a real client does.
    const length = r.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(r.body)) };
    const req = httpRequest({
      host: base.hostname, port: base.port, method: r.method, path: r.url, headers: { ...r.headers, ...length }, agent: false,
      timeout: timeoutMs,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new HangError(`no answer within ${timeoutMs} ms: ${r.method} ${r.url.slice(0, 100)}`)));
    req.on('error', reject);
    req.end(r.body);
  });
}
