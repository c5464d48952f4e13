/**
 * The port to a chat model that answers with JSON: an OpenAI-compatible chat-completions server (Ollama, llama.cpp's
 * server, vLLM, LM Studio, OpenAI) behind adapters/llm. Ingestion (core/ingestion) is its one user.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The JSON Schema an answer must follow, named as `response_format.json_schema.name` wants it. */
export interface AnswerSchema {
  name: string;
  schema: Record<string, unknown>;
}

/**
 * How the answer's JSON was obtained: the server enforced the schema (`json_schema`), only JSON (`json_object`), or
 * the JSON was taken out of plain text (`text`), each a fallback when the server refused the one before.
 */
export type StructuredMode = 'json_schema' | 'json_object' | 'text';

export interface ChatRequest {
  messages: readonly ChatMessage[];
  schema: AnswerSchema;
  /**
   * Aborts the call (and its retries): the job's lease is lost or the node stops. `complete` then rejects at once
   * with the signal's reason, not a ChatModelError.
   */
  signal?: AbortSignal;
}

export interface ChatAnswer {
  /** The JSON value the answer holds (parsed; not yet checked against the schema: the caller validates). */
  json: unknown;
  /** The answer's text as received, for the repair prompt and the job's record. */
  text: string;
  mode: StructuredMode;
  /** Token counts as the server reported them (`usage`); 0 when it reported none. */
  promptTokens: number;
  completionTokens: number;
  /** HTTP round trips this answer took (retries and structured-output fallbacks included). */
  calls: number;
}

/**
 * Why a call gave no usable answer:
 * - `timeout`: no answer within the timeout, after the retries;
 * - `unavailable`: 429 or 5xx or a network error, after the retries;
 * - `refused`: the model declined (a `refusal`, or `finish_reason: content_filter`);
 * - `bad_answer`: an answer holding no JSON value (after the text fallback);
 * - `rejected`: the server refused the request itself (4xx other than 429, e.g. an unknown model or a bad key).
 */
export type ChatFailure = 'timeout' | 'unavailable' | 'refused' | 'bad_answer' | 'rejected';

export class ChatModelError extends Error {
  /** For `bad_answer`: what the model did answer, so a caller can show it back in a repair prompt and count its tokens. */
  readonly answer: { text: string; promptTokens: number; completionTokens: number } | undefined;

  constructor(readonly failure: ChatFailure, message: string, readonly calls: number,
    options?: { cause?: unknown; answer?: { text: string; promptTokens: number; completionTokens: number } }) {
    super(message, options);
    this.name = 'ChatModelError';
    this.answer = options?.answer;
  }
}

export interface ChatModel {
  /** The model's name as configured (`MNEMO_LLM_MODEL`), recorded with what it produced. */
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatAnswer>;
}
