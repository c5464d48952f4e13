import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiChatModel, extractJson, type OpenAiChatModelOptions } from '../../src/adapters/llm/openai-chat.model.ts';
import { ChatModelError, type ChatRequest } from '../../src/core/llm/chat-model.port.ts';
import { startMockLlm, type MockLlm, type MockLlmOptions } from '../support/mock-llm-server.ts';

const FACTS_SCHEMA = {
  name: 'facts',
  schema: {
    type: 'object',
    properties: { facts: { type: 'array', items: { type: 'string' } } },
    required: ['facts'],
    additionalProperties: false,
  },
};

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [
    { role: 'system', content: 'You extract facts.' },
    { role: 'user', content: 'I moved to Lisbon in May.' },
  ],
  schema: FACTS_SCHEMA,
  ...overrides,
});

let llm: MockLlm | undefined;
let sleeps: number[];

afterEach(async () => {
  await llm?.close();
  llm = undefined;
});

async function setUp(server: MockLlmOptions = {}, options: Partial<OpenAiChatModelOptions> = {}) {
  llm = await startMockLlm(server);
  sleeps = [];
  const model = createOpenAiChatModel({
    url: llm.url,
    model: 'qwen2.5:7b',
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
  return { llm, model };
}

async function failureOf(promise: Promise<unknown>): Promise<ChatModelError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ChatModelError);
  return error as ChatModelError;
}

describe('OpenAI-compatible chat model', () => {
  it('asks for json_schema first and returns the parsed answer with its usage', async () => {
    const { llm, model } = await setUp(
      { apiKey: 'sk-test', script: () => ({ json: { facts: ['lives in Lisbon'] }, usage: { prompt_tokens: 42, completion_tokens: 7 } }) },
      { apiKey: 'sk-test' },
    );
    const answer = await model.complete(request());

    expect(answer).toEqual({
      json: { facts: ['lives in Lisbon'] },
      text: '{"facts":["lives in Lisbon"]}',
      mode: 'json_schema',
      promptTokens: 42,
      completionTokens: 7,
      calls: 1,
    });
    expect(model.model).toBe('qwen2.5:7b');
    expect(llm.requests).toHaveLength(1);
    const sent = llm.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({
      model: 'qwen2.5:7b',
      messages: request().messages,
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'facts', schema: FACTS_SCHEMA.schema, strict: true } },
    });
    expect(sleeps).toEqual([]);
  });

  it('uses a URL already ending in /chat/completions as is, and sends no Authorization without a key', async () => {
    const { llm } = await setUp();
    const model = createOpenAiChatModel({ url: `${llm.url}/chat/completions/`, model: 'm', temperature: 0.3 });
    await model.complete(request());
    expect(llm.requests[0]!.path).toBe('/v1/chat/completions');
    expect(llm.requests[0]!.headers.authorization).toBeUndefined();
    expect(llm.requests[0]!.body?.temperature).toBe(0.3);
  });

  it('falls back to json_object when json_schema is refused, with the schema in the system message', async () => {
    const { llm, model } = await setUp({ supportsJsonSchema: false, script: () => ({ json: { facts: [] } }) });
    const answer = await model.complete(request());

    expect(answer).toMatchObject({ json: { facts: [] }, mode: 'json_object', calls: 2 });
    expect(llm.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object']);
    const messages = llm.requests[1]!.messages;
    expect(messages).toHaveLength(2);
    expect(messages[0]!.role).toBe('system');
    expect(messages[0]!.content).toMatch(/^You extract facts\.\n\nAnswer with one JSON value/);
    expect(messages[0]!.content).toContain(JSON.stringify(FACTS_SCHEMA.schema));
    expect(messages[1]).toEqual(request().messages[1]);
  });

  it('adds a system message for the instruction when the prompt has none', async () => {
    const { llm, model } = await setUp({ supportsJsonSchema: false });
    await model.complete(request({ messages: [{ role: 'user', content: 'hello' }] }));
    expect(llm.requests[1]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(llm.requests[1]!.messages[0]!.content).toContain('JSON Schema');
  });

  it('falls back to plain text and takes the JSON out of a fenced answer', async () => {
    const { llm, model } = await setUp({
      supportsJsonSchema: false,
      supportsJsonObject: false,
      script: () => ({ content: 'Here are the facts:\n```json\n{"facts": ["moved to Lisbon"]}\n```\nAnything else?' }),
    });
    const answer = await model.complete(request());

    expect(answer).toMatchObject({ json: { facts: ['moved to Lisbon'] }, mode: 'text', calls: 3 });
    expect(answer.text).toContain('Here are the facts');
    expect(llm.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object', 'text']);
    expect(llm.requests[2]!.body).not.toHaveProperty('response_format');
    expect(llm.requests[2]!.messages[0]!.content).toContain('JSON Schema');
  });

  it('remembers the rung that worked, per schema name', async () => {
    const { llm, model } = await setUp({ supportsJsonSchema: false, supportsJsonObject: false, script: () => ({ content: '{"facts":[]}' }) });
    await model.complete(request());
    llm.requests.length = 0;

    const again = await model.complete(request());
    expect(again).toMatchObject({ mode: 'text', calls: 1 });
    expect(llm.requests.map((r) => r.responseFormat)).toEqual(['text']);

    // Another schema climbs the ladder once for itself: strict mode may refuse one schema and accept another.
    llm.requests.length = 0;
    await model.complete(request({ schema: { name: 'decision', schema: { type: 'object' } } }));
    expect(llm.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object', 'text']);
  });

  it('falls back on a 500 that names the format (older llama.cpp) without retrying it', async () => {
    const { llm, model } = await setUp({
      script: (req) => (req.responseFormat === 'json_schema'
        ? { status: 500, body: { error: { code: 500, message: 'Unsupported response_format type' } } }
        : { json: { facts: [] } }),
    });
    const answer = await model.complete(request());
    expect(answer).toMatchObject({ mode: 'json_object', calls: 2 });
    expect(llm.requests).toHaveLength(2);
    expect(sleeps).toEqual([]);
  });

  it('rejects a 400 that is not about the format at once, without falling back', async () => {
    const { llm, model } = await setUp({
      script: () => ({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens" } } }),
    });
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('rejected');
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain('maximum context length');
    expect(error.calls).toBe(1);
    expect(llm.requests).toHaveLength(1);
  });

  it('waits for Retry-After on a 429, then succeeds', async () => {
    const { llm, model } = await setUp({
      script: (req) => (req.index === 0 ? { status: 429, retryAfter: 2, body: { error: { message: 'Rate limit reached' } } } : { json: { facts: [] } }),
    });
    const answer = await model.complete(request());
    expect(answer).toMatchObject({ mode: 'json_schema', calls: 2 });
    expect(sleeps).toEqual([2000]);
    expect(llm.requests).toHaveLength(2);
  });

  it('caps a long Retry-After at 20 s', async () => {
    const { model } = await setUp({
      script: (req) => (req.index === 0 ? { status: 429, retryAfter: 3600 } : { json: { facts: [] } }),
    });
    await model.complete(request());
    expect(sleeps).toEqual([20_000]);
  });

  it('backs off exponentially on 5xx and gives up as unavailable, naming the provider message', async () => {
    const { llm, model } = await setUp(
      { script: () => ({ status: 503, body: { error: { message: 'model is loading' } } }) },
      { maxRetries: 3 },
    );
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('unavailable');
    expect(error.message).toMatch(/after 4 attempts.*HTTP 503.*model is loading/);
    expect(error.calls).toBe(4);
    expect(llm.requests).toHaveLength(4);
    expect(sleeps).toEqual([500, 1000, 2000]);
  });

  it('retries a dropped connection', async () => {
    const { model } = await setUp({ script: (req) => (req.index === 0 ? { drop: true } : { json: { facts: [] } }) });
    expect(await model.complete(request())).toMatchObject({ calls: 2 });
    expect(sleeps).toEqual([500]);
  });

  it('one retry budget covers the fallbacks too', async () => {
    const { llm, model } = await setUp(
      { supportsJsonSchema: false, script: (req) => (req.index === 1 ? { status: 502 } : { json: { facts: [] } }) },
      { maxRetries: 1 },
    );
    const answer = await model.complete(request());
    expect(answer).toMatchObject({ mode: 'json_object', calls: 3 });
    expect(llm.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('times out each attempt after timeoutMs and fails as timeout', async () => {
    const { llm, model } = await setUp({ script: () => ({ delayMs: 5_000, json: {} }) }, { timeoutMs: 100, maxRetries: 1 });
    const started = Date.now();
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('timeout');
    expect(error.message).toMatch(/timed out after 2 attempts.*no answer within 100 ms/);
    expect(error.calls).toBe(2);
    expect(llm.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('retries a timed-out attempt and takes the next answer', async () => {
    const { model } = await setUp(
      { script: (req) => (req.index === 0 ? { delayMs: 5_000 } : { json: { facts: ['late'] } }) },
      { timeoutMs: 100 },
    );
    expect(await model.complete(request())).toMatchObject({ json: { facts: ['late'] }, calls: 2 });
  });

  it('reports unavailable when the last failure was not a timeout', async () => {
    const { model } = await setUp(
      { script: (req) => (req.index === 0 ? { delayMs: 5_000 } : { status: 500 }) },
      { timeoutMs: 100, maxRetries: 1 },
    );
    expect((await failureOf(model.complete(request()))).failure).toBe('unavailable');
  });

  it('rejects a 401 at once and never repeats the key, even when the server echoes it', async () => {
    const { llm, model } = await setUp({ apiKey: 'sk-right' }, { apiKey: 'sk-wrong-secret-1234' });
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('rejected');
    expect(error.calls).toBe(1);
    expect(llm.requests).toHaveLength(1);
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expect(error.message).not.toContain('sk-wrong');
    expect(JSON.stringify(error)).not.toContain('sk-wrong');
    expect(String(error.cause ?? '')).not.toContain('sk-wrong');
    expect(error.stack).not.toContain('sk-wrong');
  });

  it('never shows credentials of the URL in its errors', async () => {
    const { llm } = await setUp();
    const url = llm.url.replace('http://', 'http://user:pa55word@');
    const model = createOpenAiChatModel({ url, model: 'm', fetchImpl: async () => new Response('{"error":"nope"}', { status: 404 }) });
    const error = await failureOf(model.complete(request()));
    expect(error.message).toContain('HTTP 404');
    expect(error.message).not.toContain('pa55word');
    expect(error.message).not.toContain('user');
  });

  it('rejects an unknown path as the server answers it (404)', async () => {
    const { llm } = await setUp();
    const model = createOpenAiChatModel({ url: llm.url.replace(/\/v1$/, '/v2'), model: 'm' });
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('rejected');
    expect(error.message).toContain('Unknown request URL');
  });

  it('fails as refused on a refusal or a content filter', async () => {
    const { llm, model } = await setUp({ script: () => ({ refusal: "I can't help with that." }) });
    const refusal = await failureOf(model.complete(request()));
    expect(refusal.failure).toBe('refused');
    expect(refusal.message).toContain("I can't help with that.");
    expect(refusal.calls).toBe(1);

    llm.setScript(() => ({ content: '', finishReason: 'content_filter' }));
    const filtered = await failureOf(model.complete(request()));
    expect(filtered.failure).toBe('refused');
    expect(filtered.message).toContain('content_filter');
  });

  it('fails as bad_answer when the answer holds no JSON', async () => {
    const { llm, model } = await setUp({ script: () => ({ content: 'I could not find any facts, sorry.' }) });
    const error = await failureOf(model.complete(request()));
    expect(error.failure).toBe('bad_answer');
    expect(error.message).toContain('no JSON value');
    expect(error.calls).toBe(1);

    llm.setScript(() => ({ content: '{"facts": ["cut', finishReason: 'length' }));
    expect((await failureOf(model.complete(request()))).message).toContain('finish_reason length');
  });

  it('counts tokens from usage, 0 when the server reports none, and counts every round trip', async () => {
    const { llm, model } = await setUp({ supportsJsonSchema: false, script: () => ({ json: { facts: ['a'] } }) });
    const answer = await model.complete(request());
    // The refused json_schema attempt reports no usage; the answer's counts are the mock's characters / 4.
    const prompt = llm.requests[1]!.prompt;
    expect(answer.promptTokens).toBe(Math.ceil(prompt.length / 4));
    expect(answer.completionTokens).toBe(Math.ceil('{"facts":["a"]}'.length / 4));
    expect(answer.calls).toBe(2);

    llm.setScript(() => ({ json: { facts: [] }, usage: null }));
    expect(await model.complete(request())).toMatchObject({ promptTokens: 0, completionTokens: 0, calls: 1 });
  });

  it('stops at once when the signal aborts during a request, without retrying', async () => {
    const { llm, model } = await setUp({ script: () => ({ delayMs: 10_000, json: {} }) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const error = await model.complete(request({ signal: controller.signal })).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ChatModelError);
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(llm.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('stops at once when the signal aborts during the backoff wait', async () => {
    const { llm } = await setUp({ script: () => ({ status: 503 }) });
    const controller = new AbortController();
    const model = createOpenAiChatModel({
      url: llm.url,
      model: 'm',
      // A wait that only the abort can end.
      sleep: () => new Promise<void>(() => setTimeout(() => controller.abort(new Error('lease lost')), 10)),
    });
    const error = await model.complete(request({ signal: controller.signal })).catch((e: unknown) => e);
    expect((error as Error).message).toBe('lease lost');
    expect(llm.requests).toHaveLength(1);
  });

  it('makes no request when the signal is already aborted', async () => {
    const { llm, model } = await setUp();
    const error = await model.complete(request({ signal: AbortSignal.abort() })).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(llm.requests).toHaveLength(0);
  });

  it('refuses invalid options', () => {
    expect(() => createOpenAiChatModel({ url: 'http://x/v1', model: 'm', timeoutMs: 0 })).toThrow(RangeError);
    expect(() => createOpenAiChatModel({ url: 'http://x/v1', model: 'm', maxRetries: -1 })).toThrow(RangeError);
  });
});

describe('extractJson', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  [1, 2]\n', [1, 2]],
    ['null', null],
    ['```json\n{"a": 1}\n```', { a: 1 }],
    ['Sure!\n```\n[{"a": "}"}]\n```', [{ a: '}' }]],
    ['Result: {"text": "a {brace} and \\"quote\\" inside"} done', { text: 'a {brace} and "quote" inside' }],
    ['see [1] and {not json} then {"a": [1, {"b": 2}]}', [1]],
    ['prose {not json} then {"a": [1, {"b": 2}]} trailing }', { a: [1, { b: 2 }] }],
  ])('finds the value in %j', (text, expected) => {
    expect(extractJson(text)).toEqual({ value: expected });
  });

  it('looks for the schema\'s top-level type first', () => {
    const text = 'Based on [1] and [2]: {"facts": ["x"]}';
    expect(extractJson(text, 'object')).toEqual({ value: { facts: ['x'] } });
    expect(extractJson('{"note": 1} then ["x"]', 'array')).toEqual({ value: ['x'] });
    expect(extractJson('only [1] here', 'object')).toEqual({ value: [1] });
  });

  it.each(['', 'no json here', '{"a": 1', '```json\n{broken\n```', '] {"unclosed": [1}'])('finds none in %j', (text) => {
    expect(extractJson(text)).toBeUndefined();
  });
});
