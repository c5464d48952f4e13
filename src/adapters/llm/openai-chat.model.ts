import {
  ChatModelError, type AnswerSchema, type ChatAnswer, type ChatMessage, type ChatModel, type ChatRequest, type StructuredMode,
} from '../../core/llm/chat-model.port.ts';
import { endpointUrl, parseRetryAfter, providerMessage, retryDelayMs, sleepMs } from '../http/provider-http.ts';

export interface OpenAiChatModelOptions {
  /** Base URL such as `http://localhost:11434/v1`; a URL already ending in `/chat/completions` is used as is. */
  url: string;
  model: string;
  apiKey?: string;
  /** Limit of one HTTP attempt, not of the whole call: a local model on a CPU can take tens of seconds to answer. */
  timeoutMs?: number;
  /**
   * Retries after the first attempt, for 429, 5xx, timeouts and network errors. One budget per `complete` call,
   * shared by the structured-output rungs, so a call makes at most `maxRetries + 3` round trips.
   */
  maxRetries?: number;
  /** 0 by default: extraction wants the model's most likely answer, and the same one when a job is re-run. */
  temperature?: number;
  fetchImpl?: typeof fetch;
  /** Injected by tests so that backoff does not really wait; the signal is the caller's, to end the wait early. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The structured-output rungs, most reliable first; a server that refuses one is asked with the next. */
const LADDER: readonly StructuredMode[] = ['json_schema', 'json_object', 'text'];

/**
 * A server that does not support a `response_format` says so with a 400 or 422 (OpenAI, vLLM, LM Studio), a 501, or
 * a 500 (older llama.cpp servers), naming the format in its message. Other 4xx answers (unknown model, prompt too
 * long) are not about the format and would fail the same way on every rung, so they are rejected at once.
 */
const FORMAT_REFUSAL_STATUSES = new Set([400, 422, 500, 501]);
const FORMAT_WORDS = /response_format|json_schema|json_object|schema|structured output|grammar/i;

/** Bounds the scan for a JSON value in a long answer full of brackets (each candidate costs a scan and a parse). */
const MAX_JSON_CANDIDATES = 100;
const MAX_REFUSAL_TEXT = 500;

type Attempt =
  | { kind: 'answer'; body: unknown }
  | { kind: 'format_refused'; failure: string }
  | { kind: 'rejected'; failure: string }
  | { kind: 'transient'; failure: string; timedOut: boolean; retryAfterMs?: number | undefined; cause?: unknown };

export function createOpenAiChatModel(options: OpenAiChatModelOptions): ChatModel {
  const {
    model, apiKey, timeoutMs = 60_000, maxRetries = 3, temperature = 0, fetchImpl = fetch, sleep = sleepMs,
  } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`invalid timeoutMs: ${timeoutMs}`);
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError(`invalid maxRetries: ${maxRetries}`);
  const endpoint = endpointUrl(options.url, 'chat/completions');
  const shownEndpoint = withoutCredentials(endpoint);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  /**
   * The rung that last produced an answer, per schema name: a server's support is the same for every call, but
   * OpenAI's strict mode refuses some schemas and not others, and one such schema must not demote the rest.
   */
  const workingRung = new Map<string, number>();

  /** A provider may echo the key it was sent (in a 401's message): it must not reach an error or a log. */
  const redact = (text: string): string => (apiKey ? text.split(apiKey).join('[redacted]') : text);

  function requestBody(mode: StructuredMode, request: ChatRequest): string {
    const body: Record<string, unknown> = { model, temperature };
    if (mode === 'json_schema') {
      body.messages = request.messages;
      body.response_format = {
        type: 'json_schema', json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true },
      };
    } else {
      // Without an enforced schema the model only knows it from the prompt; OpenAI's json_object mode also refuses
      // a prompt that does not mention JSON.
      body.messages = withJsonInstruction(request.messages, request.schema);
      if (mode === 'json_object') body.response_format = { type: 'json_object' };
    }
    return JSON.stringify(body);
  }

  /** One round trip. Throws only the caller's abort; every other outcome is reported for `complete` to decide. */
  async function attemptOnce(mode: StructuredMode, body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetchImpl(endpoint, {
        method: 'POST', headers, body, signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (res.ok) return { kind: 'answer', body: await res.json() };
      const message = await providerMessage(res, redact);
      const failure = `HTTP ${res.status} from ${shownEndpoint}: ${message}`;
      if (mode !== 'text' && FORMAT_REFUSAL_STATUSES.has(res.status) && FORMAT_WORDS.test(message)) {
        return { kind: 'format_refused', failure };
      }
      if (res.status === 429 || res.status >= 500) {
        return { kind: 'transient', failure, timedOut: false, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) };
      }
      return { kind: 'rejected', failure };
    } catch (err) {
      signal?.throwIfAborted();
      // Network errors, timeouts and cut-off bodies are transient as far as we can tell.
      const timedOut = timeout.aborted;
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : redact(err instanceof Error ? err.message : String(err));
      return { kind: 'transient', failure: `${shownEndpoint}: ${reason}`, timedOut, cause: err };
    }
  }

  /** The backoff wait, ended at once (throwing the abort) when the caller aborts. */
  async function backoff(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (!signal) return sleep(ms);
    signal.throwIfAborted();
    let onAbort = (): void => {};
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([sleep(ms, signal), aborted]);
    } catch (err) {
      signal.throwIfAborted();
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    model,
    async complete(request) {
      const { signal, schema } = request;
      signal?.throwIfAborted();
      let rung = workingRung.get(schema.name) ?? 0;
      let calls = 0;
      let transientFailures = 0;
      for (;;) {
        const mode = LADDER[rung]!;
        const outcome = await attemptOnce(mode, requestBody(mode, request), signal);
        calls++;
        switch (outcome.kind) {
          case 'answer':
            // A 2xx means the server took the format, whatever the answer holds.
            workingRung.set(schema.name, rung);
            return readAnswer(outcome.body, mode, calls, model, schema);
          case 'format_refused':
            rung++;
            break;
          case 'rejected':
            throw new ChatModelError('rejected', `chat completion rejected: ${outcome.failure}`, calls);
          case 'transient':
            if (transientFailures >= maxRetries) {
              const failure = outcome.timedOut ? 'timeout' : 'unavailable';
              const verb = outcome.timedOut ? 'timed out' : 'failed';
              throw new ChatModelError(failure, `chat completion ${verb} after ${calls} attempts: ${outcome.failure}`, calls, {
                cause: outcome.cause,
              });
            }
            await backoff(retryDelayMs(transientFailures, outcome.retryAfterMs), signal);
            transientFailures++;
            break;
        }
      }
    },
  };
}

/** Appends the instruction to the caller's system message (or adds one), so the prompt's own order is kept. */
function withJsonInstruction(messages: readonly ChatMessage[], schema: AnswerSchema): ChatMessage[] {
  const instruction = 'Answer with one JSON value and nothing else (no prose, no code fence). '
    + `It must follow this JSON Schema:\n${JSON.stringify(schema.schema)}`;
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${instruction}` }, ...rest];
  return [{ role: 'system', content: instruction }, ...messages];
}

interface Completion {
  choices?: { message?: { content?: unknown; refusal?: unknown } | null; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

/** Reads `choices[0]` of a 2xx answer: a refusal, the JSON value its content holds, or no JSON at all. */
function readAnswer(body: unknown, mode: StructuredMode, calls: number, model: string, schema: AnswerSchema): ChatAnswer {
  const completion = (typeof body === 'object' && body !== null ? body : {}) as Completion;
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  const refusal = choice?.message?.refusal;
  if (typeof refusal === 'string' && refusal.trim() !== '') {
    throw new ChatModelError('refused', `${model} refused to answer: ${refusal.slice(0, MAX_REFUSAL_TEXT)}`, calls);
  }
  if (choice?.finish_reason === 'content_filter') {
    throw new ChatModelError('refused', `${model} refused to answer (finish_reason content_filter)`, calls);
  }
  const content = choice?.message?.content;
  const text = typeof content === 'string' ? content : '';
  const found = extractJson(text, schema.schema.type);
  if (!found) {
    const why = !choice ? 'an answer with no choices'
      : choice.finish_reason === 'length' ? 'an answer cut off at the token limit (finish_reason length)'
        : text.trim() === '' ? 'an empty answer' : 'an answer holding no JSON value';
    throw new ChatModelError('bad_answer', `${model} gave ${why}`, calls, {
      answer: { text, promptTokens: tokenCount(completion.usage?.prompt_tokens), completionTokens: tokenCount(completion.usage?.completion_tokens) },
    });
  }
  return {
    json: found.value,
    text,
    mode,
    promptTokens: tokenCount(completion.usage?.prompt_tokens),
    completionTokens: tokenCount(completion.usage?.completion_tokens),
    calls,
  };
}

const tokenCount = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/**
 * The JSON value a model's text holds: the whole text, else the first fenced block (```json … ```) that parses, else
 * the first balanced `{…}` or `[…]` that parses. `expected` is the schema's top-level type: with `object`, a `{…}`
 * is looked for before any `[…]`, so a citation like `[1]` in the prose before the answer is not taken for it.
 * Undefined when there is none (`{ value }` because `null` is JSON too).
 */
export function extractJson(text: string, expected?: unknown): { value: unknown } | undefined {
  const whole = parseJson(text.trim());
  if (whole) return whole;
  for (const fence of text.matchAll(/```[\w-]*[^\S\n]*\n?([\s\S]*?)```/g)) {
    const fenced = parseJson(fence[1]!.trim());
    if (fenced) return fenced;
  }
  const preferred = expected === 'object' ? '{' : expected === 'array' ? '[' : undefined;
  return (preferred && firstBalancedValue(text, preferred)) || firstBalancedValue(text, '{[');
}

function parseJson(text: string): { value: unknown } | undefined {
  if (text === '') return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** The first balanced value opening with one of `openers` that parses. */
function firstBalancedValue(text: string, openers: string): { value: unknown } | undefined {
  let candidates = 0;
  for (let start = 0; start < text.length && candidates < MAX_JSON_CANDIDATES; start++) {
    if (!openers.includes(text[start]!)) continue;
    candidates++;
    const end = balancedEnd(text, start);
    if (end === undefined) continue;
    const value = parseJson(text.slice(start, end + 1));
    if (value) return value;
  }
  return undefined;
}

/** The index of the bracket closing the one at `start`, skipping brackets inside JSON strings; undefined if none. */
function balancedEnd(text: string, start: number): number | undefined {
  const closers: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '{') {
      closers.push('}');
    } else if (c === '[') {
      closers.push(']');
    } else if (c === '}' || c === ']') {
      if (closers.pop() !== c) return undefined;
      if (closers.length === 0) return i;
    }
  }
  return undefined;
}

/** The endpoint as errors show it: without a user name or password that a configured URL may carry. */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
