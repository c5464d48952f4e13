import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder, type OpenAiEmbedderOptions } from '../../src/adapters/embeddings/openai.embedder.ts';
import { EmbeddingError } from '../../src/core/embeddings/embedder.port.ts';

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: { model: string; input: string[]; encoding_format?: string; dimensions?: number };
}

/** Decides the answer to one request; the default answers like OpenAI. */
type Handler = (req: Received, res: ServerResponse) => void;

/** A deterministic vector for a text, so tests can check which text landed in which slot. */
const vectorFor = (text: string, width: number): number[] =>
  Array.from({ length: width }, (_, i) => (i === 0 ? text.length : ((text.charCodeAt(i % text.length) * (i + 1)) % 97) / 97));

function answer(res: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(json));
}

/** OpenAI's format, with `data` deliberately in reverse order: the client must sort by `index`. */
const openAiAnswer = (width: number): Handler => (req, res) =>
  answer(res, 200, {
    object: 'list',
    model: req.body.model,
    data: req.body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, width) })).reverse(),
  });

let server: Server;
let baseUrl: string;
let received: Received[];
let handlers: Handler[];
let fallback: Handler;

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const r: Received = { url: req.url ?? '', headers: req.headers, body: JSON.parse(raw) as Received['body'] };
      received.push(r);
      (handlers.shift() ?? fallback)(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  received = [];
  handlers = [];
  fallback = openAiAnswer(8);
});

let sleeps: number[];
function embedder(options: Partial<OpenAiEmbedderOptions> = {}) {
  sleeps = [];
  return createOpenAiEmbedder({
    url: baseUrl,
    model: 'text-embedding-3-small',
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
}

describe('OpenAI-compatible embedder', () => {
  it('sends batches, authenticates, and returns vectors in input order', async () => {
    const e = embedder({ apiKey: 'sk-test', batchSize: 2 });
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const vectors = await e.embed(texts);

    expect(received.map((r) => r.body.input)).toEqual([['alpha', 'beta'], ['gamma', 'delta'], ['epsilon']]);
    for (const r of received) {
      expect(r.url).toBe('/v1/embeddings');
      expect(r.headers.authorization).toBe('Bearer sk-test');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toMatchObject({ model: 'text-embedding-3-small', encoding_format: 'float' });
      expect(r.body).not.toHaveProperty('dimensions');
    }
    expect(vectors).toHaveLength(5);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(Array.from(v)).toEqual(Array.from(Float32Array.from(vectorFor(texts[i]!, 8))));
    });
  });

  it('learns the width from the first answer (1536 before it) and names the model', async () => {
    const e = embedder();
    expect(e.modelId).toBe('openai:text-embedding-3-small');
    expect(e.dimensions).toBe(1536);
    await e.embed(['x']);
    expect(e.dimensions).toBe(8);
    expect(sleeps).toEqual([]);
  });

  it('sends the configured width and includes it in the model id', async () => {
    const e = embedder({ dimensions: 8 });
    expect(e.modelId).toBe('openai:text-embedding-3-small@8');
    expect(e.dimensions).toBe(8);
    await e.embed(['x']);
    expect(received[0]!.body.dimensions).toBe(8);
  });

  it('sends no Authorization header without a key, and accepts a full /embeddings URL', async () => {
    await embedder({ url: `${baseUrl}/embeddings` }).embed(['x']);
    expect(received[0]!.url).toBe('/v1/embeddings');
    expect(received[0]!.headers.authorization).toBeUndefined();
  });

  it('does not send blank texts and returns zero vectors in their slots', async () => {
    const e = embedder();
    const vectors = await e.embed(['', 'one', '   ', 'two', '\n']);
    expect(received).toHaveLength(1);
    expect(received[0]!.body.input).toEqual(['one', 'two']);
    expect(vectors.map((v) => v.length)).toEqual([8, 8, 8, 8, 8]);
    expect(vectors[1]![0]).toBe(3);
    expect(vectors[3]![0]).toBe(3);
    for (const i of [0, 2, 4]) expect(vectors[i]!.every((x) => x === 0)).toBe(true);
  });

  it('makes no request at all when every text is blank', async () => {
    const vectors = await embedder({ dimensions: 8 }).embed(['', ' ']);
    expect(received).toHaveLength(0);
    expect(vectors.map((v) => v.length)).toEqual([8, 8]);
  });

  it('retries a 429 after the Retry-After delay', async () => {
    handlers.push((_req, res) => answer(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' }));
    const vectors = await embedder().embed(['x']);
    expect(received).toHaveLength(2);
    expect(sleeps).toEqual([0]);
    expect(vectors[0]![0]).toBe(1);
  });

  it('backs off exponentially on 5xx and fails with EmbeddingError once retries are spent', async () => {
    fallback = (_req, res) => answer(res, 503, { error: { message: 'overloaded' } });
    const error = await embedder({ maxRetries: 3 }).embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toMatch(/4 attempts.*503.*overloaded/);
    expect(received).toHaveLength(4);
    expect(sleeps).toEqual([500, 1000, 2000]);
  });

  it('caps a long Retry-After at 20 s', async () => {
    handlers.push((_req, res) => answer(res, 429, {}, { 'retry-after': '3600' }));
    await embedder().embed(['x']);
    expect(sleeps).toEqual([20_000]);
  });

  it('retries network errors', async () => {
    handlers.push((_req, res) => res.socket?.destroy());
    await embedder().embed(['x']);
    expect(received).toHaveLength(2);
    expect(sleeps).toEqual([500]);
  });

  it('fails a 400 at once with the status and the provider message', async () => {
    fallback = (_req, res) => answer(res, 400, { error: { message: "'input' is invalid", type: 'invalid_request_error' } });
    const error = await embedder().embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toContain('400');
    expect((error as Error).message).toContain("'input' is invalid");
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('rejects an answer of the wrong width, naming both numbers', async () => {
    fallback = openAiAnswer(768);
    const error = await embedder({ dimensions: 1536 }).embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toContain('expected 1536 dimensions, got 768');
  });

  it('rejects a later answer whose width differs from the learned one', async () => {
    const e = embedder();
    await e.embed(['x']);
    fallback = openAiAnswer(4);
    await expect(e.embed(['y'])).rejects.toThrow('expected 8 dimensions, got 4');
  });

  it('rejects an answer with the wrong number of items', async () => {
    fallback = (req, res) => answer(res, 200, { data: [{ index: 0, embedding: vectorFor(req.body.input[0]!, 8) }] });
    const error = await embedder().embed(['a', 'b']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toContain('expected 2, got 1');
  });

  it('rejects non-finite numbers', async () => {
    fallback = (_req, res) => answer(res, 200, { data: [{ index: 0, embedding: [1, null, 3] }] });
    await expect(embedder().embed(['a'])).rejects.toThrow(/non-finite/);
  });

  it('times out a hanging request and retries it', async () => {
    handlers.push(() => {}); // never answers
    const vectors = await embedder({ timeoutMs: 200 }).embed(['x']);
    expect(received).toHaveLength(2);
    expect(vectors[0]![0]).toBe(1);
  });

  it('speaks Voyage AI dialect for voyageai hosts', async () => {
    let sent: Record<string, unknown> | undefined;
    const fetchImpl: typeof fetch = async (input, init) => {
      sent = JSON.parse(String(init?.body)) as Record<string, unknown>;
      expect(String(input)).toBe('https://api.voyageai.com/v1/embeddings');
      return new Response(JSON.stringify({ data: [{ index: 0, embedding: [0.1, 0.2] }] }), { status: 200 });
    };
    const e = createOpenAiEmbedder({ url: 'https://api.voyageai.com/v1/', model: 'voyage-3', dimensions: 2, fetchImpl });
    await e.embed(['x']);
    expect(sent).toEqual({ model: 'voyage-3', input: ['x'], output_dimension: 2 });
  });
});
