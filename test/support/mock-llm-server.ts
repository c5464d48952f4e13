import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat-completions server on loopback (the local model Mnemo's ingestion would call), for tests
 * that need a real HTTP round trip: the LLM adapter, the ingestion worker, REST, MCP and the bench.
 *
 * It answers `POST /v1/chat/completions` from a script, a function of the request returning a `MockReply`:
 *
 * ```ts
 * const llm = await startMockLlm({
 *   script: (req) => (req.prompt.includes('Extract') ? { json: { facts: [] } } : { json: { action: 'ADD' } }),
 * });
 * const model = createOpenAiChatModel({ url: llm.url, model: 'test' });
 * ...
 * await llm.close();
 * ```
 *
 * Before the script runs it refuses what a real server refuses, with OpenAI's error shape `{ error: { message } }`:
 * another path or method (404), a missing or wrong bearer key when `apiKey` is set (401), a body that is not a chat
 * request (400), and a `response_format` it is told not to support (400, like older llama.cpp or Ollama versions),
 * or `json_object` asked without the word "json" in the messages (400, as OpenAI does). Every request is recorded,
 * refused ones included.
 */
export interface MockLlmOptions {
  /** Decides each answer; by default every request gets `{ json: {} }`. */
  script?: MockScript;
  /** When false, requests with `response_format.type: "json_schema"` get a 400. Default true. */
  supportsJsonSchema?: boolean;
  /** When false, requests with `response_format.type: "json_object"` get a 400. Default true. */
  supportsJsonObject?: boolean;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

export type MockScript = (request: MockLlmRequest) => MockReply | Promise<MockReply>;

export interface MockLlmMessage {
  role: string;
  content: string;
}

/** What a client sent, as recorded and as given to the script. */
export interface MockLlmRequest {
  /** Position among every request this server received (0 first), for scripts that answer the n-th one differently. */
  index: number;
  method: string;
  /** The path with its query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined when the body was not JSON. */
  body: ChatCompletionBody | undefined;
  /** `body.messages`, with non-string contents as empty strings. */
  messages: MockLlmMessage[];
  /** Every message's content joined by blank lines: what a script matches a prompt against. */
  prompt: string;
  /** `response_format.type`, or `text` when the request has no response_format. */
  responseFormat: string;
  /** `response_format.json_schema` of a json_schema request. */
  jsonSchema?: { name?: string; schema?: unknown; strict?: boolean } | undefined;
}

export interface ChatCompletionBody {
  model?: unknown;
  messages?: unknown;
  temperature?: unknown;
  response_format?: { type?: unknown; json_schema?: { name?: string; schema?: unknown; strict?: boolean } } | null;
  [field: string]: unknown;
}

/** Any reply may come late: `delayMs` holds it back (a client with a shorter timeout gives up first). */
interface Delayed {
  delayMs?: number;
}

/**
 * A 200 answer. `content` is sent as is; else `json` is sent as its JSON text; else the content is `{}` (or null
 * beside a `refusal`). `finishReason` defaults to `stop`. `usage` defaults to rough counts (characters / 4) of the
 * prompt and the content; `null` leaves `usage` out, an object overrides the counts it names.
 */
export interface MockAnswer extends Delayed {
  json?: unknown;
  content?: string | null;
  refusal?: string;
  finishReason?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/**
 * An error answer with this status. `body` is sent as JSON (a string as plain text); by default
 * `{ error: { message } }` with a message naming the status. `retryAfter` becomes the `Retry-After` header.
 */
export interface MockError extends Delayed {
  status: number;
  body?: unknown;
  retryAfter?: string | number;
}

/** No answer at all: the connection is destroyed, which the client sees as a network error. */
export interface MockDrop extends Delayed {
  drop: true;
}

export type MockReply = MockAnswer | MockError | MockDrop;

export interface MockLlm {
  /** The base URL, `http://127.0.0.1:<port>/v1`, as `MNEMO_LLM_URL` takes it. */
  url: string;
  /** Every request received, in order; tests may clear it with `requests.length = 0` (indexes keep counting). */
  requests: MockLlmRequest[];
  /** Errors thrown by the script; each also became a 500 answer. */
  scriptErrors: unknown[];
  setScript(script: MockScript): void;
  /** Closes the server, its connections and any delayed answer. */
  close(): Promise<void>;
}

/** Roughly a token per 4 characters: enough to tell counts apart and sum them. */
const roughTokens = (text: string): number => Math.ceil(text.length / 4);

export async function startMockLlm(options: MockLlmOptions = {}): Promise<MockLlm> {
  const { supportsJsonSchema = true, supportsJsonObject = true, apiKey } = options;
  let script: MockScript = options.script ?? (() => ({ json: {} }));
  const requests: MockLlmRequest[] = [];
  const scriptErrors: unknown[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let received = 0;
  let completions = 0;

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  const sendError = (res: ServerResponse, status: number, message: string, type = 'invalid_request_error'): void =>
    sendJson(res, status, { error: { message, type, param: null, code: null } });

  /** What a real server refuses before any model runs; undefined when the request may go to the script. */
  function refusal(request: MockLlmRequest): { status: number; message: string } | undefined {
    if (request.method !== 'POST' || request.path.split('?')[0] !== '/v1/chat/completions') {
      return { status: 404, message: `Unknown request URL: ${request.method} ${request.path}` };
    }
    if (apiKey !== undefined) {
      const auth = request.headers.authorization;
      if (!auth) return { status: 401, message: "You didn't provide an API key." };
      // Deliberately echoes the key it received, as a careless server might: tests check clients never repeat it.
      if (auth !== `Bearer ${apiKey}`) return { status: 401, message: `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}` };
    }
    const { body } = request;
    if (!body) return { status: 400, message: 'We could not parse the JSON body of your request.' };
    if (typeof body.model !== 'string' || body.model === '') return { status: 400, message: 'you must provide a model parameter' };
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return { status: 400, message: "Invalid 'messages': expected a non-empty array." };
    }
    switch (request.responseFormat) {
      case 'text':
        return undefined;
      case 'json_schema':
        if (!supportsJsonSchema) return { status: 400, message: 'response_format json_schema is not supported' };
        if (typeof request.jsonSchema?.name !== 'string' || typeof request.jsonSchema.schema !== 'object') {
          return { status: 400, message: "Missing required parameter: 'response_format.json_schema.name' or '.schema'." };
        }
        return undefined;
      case 'json_object':
        if (!supportsJsonObject) return { status: 400, message: 'response_format json_object is not supported' };
        if (!/json/i.test(request.prompt)) {
          return {
            status: 400,
            message: "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
          };
        }
        return undefined;
      default:
        return { status: 400, message: `Invalid value for 'response_format.type': ${request.responseFormat}` };
    }
  }

  function answer(res: ServerResponse, request: MockLlmRequest, reply: MockReply): void {
    if ('drop' in reply) {
      res.socket?.destroy();
      return;
    }
    if ('status' in reply) {
      const headers: Record<string, string> = reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) };
      if (typeof reply.body === 'string') {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...headers });
        res.end(reply.body);
        return;
      }
      const body = reply.body ?? { error: { message: `mock error with status ${reply.status}`, type: 'server_error' } };
      sendJson(res, reply.status, body, headers);
      return;
    }
    const content = reply.content !== undefined ? reply.content
      : 'json' in reply ? JSON.stringify(reply.json)
        : reply.refusal !== undefined ? null : '{}';
    const promptTokens = roughTokens(request.prompt);
    const completionTokens = roughTokens(content ?? reply.refusal ?? '');
    const usage = reply.usage === null ? undefined : {
      prompt_tokens: reply.usage?.prompt_tokens ?? promptTokens,
      completion_tokens: reply.usage?.completion_tokens ?? completionTokens,
      total_tokens: (reply.usage?.prompt_tokens ?? promptTokens) + (reply.usage?.completion_tokens ?? completionTokens),
    };
    sendJson(res, 200, {
      id: `chatcmpl-mock-${++completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.body?.model,
      choices: [{
        index: 0,
        message: { role: 'assistant', content, ...(reply.refusal === undefined ? {} : { refusal: reply.refusal }) },
        finish_reason: reply.finishReason ?? 'stop',
      }],
      ...(usage ? { usage } : {}),
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const request = recordRequest(req, raw, received++);
    requests.push(request);
    const refused = refusal(request);
    if (refused) {
      sendError(res, refused.status, refused.message);
      return;
    }
    let reply: MockReply;
    try {
      reply = await script(request);
    } catch (err) {
      scriptErrors.push(err);
      sendError(res, 500, `mock script failed: ${err instanceof Error ? err.message : String(err)}`, 'server_error');
      return;
    }
    if (!reply.delayMs) {
      answer(res, request, reply);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(res, request, reply);
    }, reply.delayMs);
    timers.add(timer);
    // A client that gave up (its timeout, its abort) needs no answer: the timer goes with it.
    res.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  }

  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => void handle(req, res, raw));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    scriptErrors,
    setScript: (next) => {
      script = next;
    },
    close: () => new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function recordRequest(req: IncomingMessage, raw: string, index: number): MockLlmRequest {
  let body: ChatCompletionBody | undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    body = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as ChatCompletionBody : undefined;
  } catch {
    body = undefined;
  }
  const messages: MockLlmMessage[] = Array.isArray(body?.messages)
    ? (body.messages as { role?: unknown; content?: unknown }[]).map((m) => ({
      role: typeof m?.role === 'string' ? m.role : '',
      content: typeof m?.content === 'string' ? m.content : '',
    }))
    : [];
  const format = body?.response_format;
  return {
    index,
    method: req.method ?? '',
    path: req.url ?? '',
    headers: req.headers,
    body,
    messages,
    prompt: messages.map((m) => m.content).join('\n\n'),
    responseFormat: format && typeof format.type === 'string' ? format.type : 'text',
    jsonSchema: format?.type === 'json_schema' ? format.json_schema : undefined,
  };
}
