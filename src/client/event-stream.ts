import { EventSourceParserStream } from 'eventsource-parser/stream';
import { MnemoError, mnemoErrorOf } from './mnemo-error.ts';
import type { FetchFunction } from './retrying-fetch.ts';

/** One event of the G8 stream (docs/events.md): its id (a resume point), its type and its payload. */
export interface MnemoEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  data: T;
}

export interface EventStreamOptions {
  /** Event types to receive (default: all). */
  events?: string[];
  /** `filters[<key>]`: memory events only; `tags`, `memory_type` or a metadata key, any of the values. */
  filters?: Record<string, string | string[]>;
  /** Resume after this event (sent as `Last-Event-ID`): replays what came after it, then continues live. */
  lastEventId?: string;
  /** Seconds between the server's heartbeats (30 to 3600). */
  heartbeat?: number;
  /** How many times in a row a dropped connection is reopened before the iteration fails (default 5). */
  maxReconnects?: number;
  signal?: AbortSignal;
}

/** An open G8 stream: iterate it for events; `lastEventId` is where to resume later. */
export interface EventStream<T = Record<string, unknown>> extends AsyncIterable<MnemoEvent<T>> {
  readonly lastEventId: string | undefined;
  /** Stops the stream; the iteration ends. */
  close(): void;
}

/** Frames that end a stream and say to come back later (a server shutting down); others are errors to raise. */
const RECONNECT_CODES = new Set(['CONNECTION_ERROR']);
const DEFAULT_RECONNECT_MS = 1000;
const MAX_RECONNECT_WAIT_MS = 30_000;

/**
 * Opens `GET /api/v1/stream` and resolves once the server has answered: from then on every event written is
 * delivered (the server fixes the stream's position before it answers), and a refusal rejects with MnemoError.
 * Iterating resumes by itself: every frame's id (heartbeats' too, which name the last event) is kept, and a connection
 * that drops or that the server ends with `CONNECTION_ERROR` is reopened with `Last-Event-ID`, so the server replays
 * what was missed. Heartbeats are not yielded.
 */
export async function openEventStream(
  send: FetchFunction, url: URL, headers: Headers, options: EventStreamOptions = {},
): Promise<EventStream> {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const maxReconnects = options.maxReconnects ?? 5;
  let lastEventId = options.lastEventId;

  for (const type of options.events ?? []) url.searchParams.append('events', type);
  for (const [key, values] of Object.entries(options.filters ?? {})) {
    for (const value of [values].flat()) url.searchParams.append(`filters[${key}]`, value);
  }
  if (options.heartbeat !== undefined) url.searchParams.set('heartbeat', String(options.heartbeat));

  async function connect(): Promise<ReadableStream<Uint8Array>> {
    const requestHeaders = new Headers(headers);
    requestHeaders.set('accept', 'text/event-stream');
    if (lastEventId !== undefined) requestHeaders.set('last-event-id', lastEventId);
    const response = await send(new Request(url, { headers: requestHeaders, signal }));
    if (!response.ok || !response.body) throw mnemoErrorOf(response, parseJson(await response.text()));
    return response.body;
  }
  let opened: ReadableStream<Uint8Array> | undefined = await connect();

  async function* iterate(): AsyncGenerator<MnemoEvent> {
    let failures = 0;
    let waitMs = DEFAULT_RECONNECT_MS;
    while (!signal.aborted) {
      let ended: 'dropped' | 'reconnect' = 'dropped';
      try {
        const body = opened ?? await connect();
        opened = undefined;
        const frames = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
        for await (const frame of frames) {
          if (frame.id) lastEventId = frame.id;
          if (frame.event === 'error') {
            const body = parseJson(frame.data) as { code?: string; message?: string; retry_after?: number };
            const error = new MnemoError({
              code: body.code ?? 'STREAM_ERROR', message: body.message ?? frame.data, status: 0, details: body,
              ...(typeof body.retry_after === 'number' ? { retryAfterMs: body.retry_after } : {}),
            });
            if (!RECONNECT_CODES.has(error.code)) throw error;
            waitMs = error.retryAfterMs ?? DEFAULT_RECONNECT_MS;
            ended = 'reconnect';
            break;
          }
          failures = 0;
          if (frame.event === 'heartbeat') continue;
          yield { id: frame.id ?? '', type: frame.event ?? 'message', data: parseJson(frame.data) as Record<string, unknown> };
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof MnemoError) throw error;
        // A network failure (reset, server gone): reopened below like a stream that ended.
      }
      if (signal.aborted) return;
      if (++failures > maxReconnects) {
        throw new MnemoError({ code: 'STREAM_DISCONNECTED', message: `the event stream dropped ${failures} times in a row`, status: 0 });
      }
      // A first drop is reopened at once (the server replays from Last-Event-ID); repeated ones back off.
      await wait(Math.min(ended === 'reconnect' ? waitMs : DEFAULT_RECONNECT_MS * (failures - 1), MAX_RECONNECT_WAIT_MS), signal);
    }
  }

  const generator = iterate();
  return {
    [Symbol.asyncIterator]: () => generator,
    get lastEventId() {
      return lastEventId;
    },
    close() {
      controller.abort();
      void opened?.cancel();
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
