import http from 'node:http';

/** Plain JSON calls to the G1 API for seeding and sanity checks (the measurements themselves use autocannon). */
export const MEMORIES_PATH = '/api/v1/memories';
export const SEARCH_PATH = '/api/v1/memories/search';

export function jsonHeaders(apiKey: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-api-key': apiKey };
}

export async function postJson(baseUrl: string, path: string, apiKey: string, body: unknown, expected: number):
  Promise<unknown> {
  const res = await fetch(baseUrl + path, { method: 'POST', headers: jsonHeaders(apiKey), body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expected) {
    throw new Error(`POST ${path} answered ${res.status}, expected ${expected}: ${text.slice(0, 500)}`);
  }
  return JSON.parse(text) as unknown;
}

/**
 * A keep-alive POST client on node:http for seeding. It costs about half the client CPU of fetch() per request,
 * which matters when client and server share two cores.
 */
export function keepAliveClient(baseUrl: string, apiKey: string, maxSockets: number) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  return {
    post(path: string, body: string, expected: number): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const req = http.request({
          host: url.hostname, port: url.port, path, method: 'POST', agent,
          headers: { ...jsonHeaders(apiKey), 'content-length': Buffer.byteLength(body) },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (res.statusCode === expected) resolve();
            else reject(new Error(`POST ${path} answered ${res.statusCode}, expected ${expected}: ${Buffer.concat(chunks).toString().slice(0, 500)}`));
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** A keep-alive JSON client on node:http that times each call. */
export function timedClient(baseUrl: string, apiKey: string, sockets: number) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const call = (method: string, path: string, body?: string) => new Promise<{ status: number; ms: number; text: string }>((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({
      host: url.hostname, port: url.port, path, method, agent,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  return { call, close: () => agent.destroy() };
}
