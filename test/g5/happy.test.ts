import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';
import { g5, G5_URL } from './client.ts';

/** What the test embedder (hashing, 256 dimensions) gives for a text, as plain numbers. */
const native = (text: string): number[] => Array.from(hashEmbed(text, 256));

/** Asserts a padded API vector: the native vector, then zeros up to `width`. */
function expectPadded(embedding: number[], text: string, width: number): void {
  expect(embedding).toHaveLength(width);
  expect(embedding.slice(0, 256)).toEqual(native(text));
  expect(embedding.slice(256).every((x) => x === 0)).toBe(true);
  expect(embedding.some((x) => x !== 0)).toBe(true);
}

describe('G5 happy paths', () => {
  let t: TestApp;
  let api: ReturnType<typeof g5>;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.freshTenant();
    api = g5(t.app, await t.key());
  });

  it('embeds a string into one 1024-dimension vector of the default model, without an envelope', async () => {
    const res = await api.embed({ input: 'hello world' });
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['data', 'model', 'object', 'usage']);
    expect(body).toMatchObject({ object: 'list', model: 'mnemo-embed-1024', usage: { prompt_tokens: 2, total_tokens: 2 } });
    expect(body.data).toHaveLength(1);
    expect(Object.keys(body.data[0]).sort()).toEqual(['embedding', 'index', 'object']);
    expect(body.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expectPadded(body.data[0].embedding, 'hello world', 1024);
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.headers.sunset).toBeUndefined();
  });

  it('keeps input order: one entry per text, index = position', async () => {
    const texts = ['alpha beta', 'gamma delta', 'epsilon', 'alpha beta'];
    const body = json(await api.embed({ input: texts }));
    expect(body.data).toHaveLength(4);
    body.data.forEach((d: Json, i: number) => {
      expect(d.index).toBe(i);
      expectPadded(d.embedding, texts[i]!, 1024);
    });
    expect(body.data[0].embedding).not.toEqual(body.data[1].embedding);
    expect(body.data[1].embedding).not.toEqual(body.data[2].embedding);
    expect(body.data[3].embedding).toEqual(body.data[0].embedding);

    const reversed = json(await api.embed({ input: [...texts].reverse() }));
    expect(reversed.data.map((d: Json) => d.embedding)).toEqual(body.data.map((d: Json) => d.embedding).reverse());
    expect(reversed.data.map((d: Json) => d.index)).toEqual([0, 1, 2, 3]);
  });

  it('treats a string as an array of one', async () => {
    const one = json(await api.embed({ input: 'same text' }));
    const array = json(await api.embed({ input: ['same text'] }));
    expect(one).toEqual(array);
  });

  it('counts usage tokens with cl100k_base, summed over the texts', async () => {
    // cl100k_base: "hello world" 2, "The quick brown fox" 4, "a" 1, "Mnemo remembers things." 6.
    const single = json(await api.embed({ input: 'The quick brown fox' }));
    expect(single.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const many = json(await api.embed({ input: ['hello world', 'The quick brown fox', 'a', 'Mnemo remembers things.'] }));
    expect(many.usage).toEqual({ prompt_tokens: 13, total_tokens: 13 });
  });

  it('accepts up to 256 texts', async () => {
    const texts = Array.from({ length: 256 }, (_, i) => `text number ${i}`);
    const body = json(await api.embed({ input: texts }));
    expect(body.data).toHaveLength(256);
    expect(body.data[255].index).toBe(255);
    expectPadded(body.data[255].embedding, 'text number 255', 1024);
  });

  it('selects another model by name', async () => {
    const res = await api.embed({ input: 'hello world', model: 'mnemo-embed-1536' });
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body.model).toBe('mnemo-embed-1536');
    expectPadded(body.data[0].embedding, 'hello world', 1536);
    expect(res.headers.deprecation).toBeUndefined();
    const explicitDefault = json(await api.embed({ input: 'hello world', model: 'mnemo-embed-1024' }));
    expect(explicitDefault).toEqual(json(await api.embed({ input: 'hello world' })));
  });

  it('serves the deprecated 768-dimension model with Deprecation, Sunset and Link headers', async () => {
    const res = await api.embed({ input: ['hello world', 'bye'], model: 'mnemo-embed-768' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe('Mon, 01 Nov 2027 00:00:00 GMT');
    expect(new Date(res.headers.sunset as string).toISOString()).toBe('2027-11-01T00:00:00.000Z');
    expect(res.headers.link).toBe('</docs>; rel="deprecation"');
    const body = json(res);
    expect(body.model).toBe('mnemo-embed-768');
    expectPadded(body.data[0].embedding, 'hello world', 768);
    expectPadded(body.data[1].embedding, 'bye', 768);
  });

  it('accepts X-Client-Version and answers exactly as without it', async () => {
    const without = await api.embed({ input: ['versioned', 'text'] });
    const withVersion = await api.embed({ input: ['versioned', 'text'] }, { 'x-client-version': 'my-sdk/1.2.3 (linux)' });
    expect(withVersion.statusCode).toBe(200);
    expect(withVersion.body).toBe(without.body);
    expect((await api.embed({ input: 'x' }, { 'x-client-version': 'v'.repeat(100) })).statusCode).toBe(200);
  });

  it('accepts a charset parameter on the content type and ignores unknown body fields', async () => {
    const res = await api.raw(JSON.stringify({ input: 'hello world', encoding_format: 'float', user: 'u-1' }), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(200);
    expectPadded(json(res).data[0].embedding, 'hello world', 1024);
  });

  it('answers on the path with a trailing slash too, and carries the gateway rate-limit headers', async () => {
    const res = await t.app.inject({
      method: 'POST', url: `${G5_URL}/`, headers: { authorization: `Bearer ${await t.key({ tier: 'free' })}` }, payload: { input: 'x' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(res.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('documents the route in the OpenAPI document', async () => {
    const spec = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const op = (spec.paths['/api/v1/embeddings/'] ?? spec.paths['/api/v1/embeddings']).post;
    expect(op.tags).toEqual(['G5 embeddings']);
    expect(op.security).toEqual([{ bearer: [] }]);
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['input']);
    expect(schema.properties.input.anyOf).toHaveLength(2);
    expect(schema.properties.model.description).toMatch(/1024/);
    expect(op.parameters.map((p: Json) => p.name)).toContain('x-client-version');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '415', '429', '503']));
  });
});
