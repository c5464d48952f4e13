import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

describe('requests that carry Content-Type: application/json and no body', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    const key = await t.key();
    auth = { 'x-api-key': key, authorization: `Bearer ${key}` };
  });
  afterAll(() => t.close());

  const send = (method: 'GET' | 'DELETE' | 'POST', url: string, headers: Record<string, string>, payload?: string) =>
    t.app.inject({ method, url, headers: { ...auth, ...headers }, ...(payload === undefined ? {} : { payload }) });

  it('reads and deletes on G1, G2 and topics as if no header were sent', async () => {
    const g1 = json(await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: auth, payload: { title: 'a', content: 'first' } })).data.id as string;
    const g2 = json(await t.app.inject({ method: 'POST', url: '/api/v1/memory', headers: auth, payload: { text: 'second' } })).id as string;
    const topic = json(await t.app.inject({ method: 'POST', url: '/api/v1/topics', headers: auth, payload: { name: 'ops' } })).data.id as string;
    for (const url of [`/api/v1/memories/${g1}`, `/api/v1/memory/${g2}`, `/api/v1/topics/${topic}`]) {
      expect((await send('GET', url, JSON_TYPE)).statusCode, `GET ${url}`).toBe(200);
      const deleted = await send('DELETE', url, JSON_TYPE);
      expect(deleted.statusCode, `DELETE ${url}: ${deleted.body}`).toBeLessThan(300);
      expect((await send('GET', url, {})).statusCode, `gone: ${url}`).toBe(404);
    }
  });

  it('still refuses an empty body where one is required', async () => {
    const res = await send('POST', '/api/v1/memories', JSON_TYPE, '');
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('VALIDATION_ERROR');
  });

  it("answers unknown paths 404 in the surface's envelope whatever the body and content type", async () => {
    const cases: [url: string, check: (body: Record<string, any>) => void][] = [ // eslint-disable-line @typescript-eslint/no-explicit-any
      ['/api/v1/memories/x/y/z', (b) => expect(b).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })],
      ['/api/v1/memory/x/y', (b) => expect(b).toMatchObject({ error: 'NOT_FOUND' })],
      ['/api/v1/topics/x/y', (b) => expect(b).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })],
      ['/api/v1/webhooks/x/y/z', (b) => expect(b).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })],
      ['/nowhere', (b) => expect(b).toBeTypeOf('object')],
    ];
    for (const [url, check] of cases) {
      for (const [headers, payload] of [[JSON_TYPE, '{not json'], [JSON_TYPE, ''], [{ 'content-type': 'text/xml' }, '<a/>']] as const) {
        const res = await send('POST', url, headers, payload);
        expect(res.statusCode, `${url} ${headers['content-type']} ${payload}`).toBe(404);
        check(json(res));
      }
    }
  });
});
