import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamEnd } from './stream-session.ts';

/** Whether the request's Accept header names `text/event-stream` (any parameters, any position). */
export function acceptsEventStream(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === 'text/event-stream');
}

export interface SseFrame {
  event?: string | undefined;
  id?: string | undefined;
  /** Serialised as one line of JSON (JSON never contains a raw newline). */
  data?: unknown;
}

export interface SseStream {
  /** Writes one frame; resolves once the socket can take more (backpressure). False once the stream has ended. */
  send(frame: SseFrame): Promise<boolean>;
  /** A comment line (`: text`), ignored by clients; also keeps proxies from timing out. */
  comment(text: string): Promise<boolean>;
  /** Ends the response (idempotent). */
  end(): void;
  readonly closed: boolean;
  /** Called once when the stream ends, by either side. */
  onClose(listener: () => void): void;
}

/** One SSE frame as text: `event:`, `id:` and `data:` lines, then a blank line. */
export function formatFrame(frame: SseFrame): string {
  let out = '';
  if (frame.event !== undefined) out += `event: ${oneLine(frame.event)}\n`;
  if (frame.id !== undefined) out += `id: ${oneLine(frame.id)}\n`;
  if (frame.data !== undefined) out += `data: ${JSON.stringify(frame.data)}\n`;
  return `${out}\n`;
}

const oneLine = (s: string): string => s.replace(/[\r\n]/g, ' ');

/**
 * Takes over the response and opens a Server-Sent Events stream: 200 with `text/event-stream`, no caching, no
 * proxy buffering, and a `retry:` hint for EventSource reconnection. Everything before this call can still fail
 * with a normal JSON error; nothing after it can.
 */
export function openSse(req: FastifyRequest, reply: FastifyReply, options: { retryMs?: number; headers?: Record<string, string> } = {}): SseStream {
  reply.hijack();
  const res = reply.raw;
  req.raw.socket?.setNoDelay(true);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'X-Request-Id': req.id,
    ...options.headers,
  });
  let closed = false;
  const listeners: (() => void)[] = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    for (const l of listeners.splice(0)) {
      try {
        l();
      } catch (err) {
        req.log.error({ err }, 'stream close listener failed');
      }
    }
  };
  res.on('close', finish);
  res.on('error', finish);

  const write = (text: string): Promise<boolean> => {
    if (closed || res.writableEnded) return Promise.resolve(false);
    if (res.write(text)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve(!closed);
      };
      res.once('drain', done);
      res.once('close', done);
    });
  };

  if (options.retryMs !== undefined) void write(`retry: ${options.retryMs}\n\n`);
  else res.flushHeaders();

  return {
    send: (frame) => write(formatFrame(frame)),
    comment: (text) => write(`: ${oneLine(text)}\n\n`),
    end() {
      if (!res.writableEnded) res.end();
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}

/** The data of an `error` frame before the server ends a stream (G8's table: code, message, retry_after in ms). */
export interface SseErrorData {
  code: string;
  message: string;
  retry_after: number;
}

/** A stream session's end over SSE, which can also end the stream with any other error frame. */
export interface SseStreamEnd extends StreamEnd {
  /** Sends one `error` frame and ends the stream; only the first reason to end is told. */
  fail(error: SseErrorData): void;
  /** True once the stream is ending (a reason was told, or it closed). */
  readonly ending: boolean;
}

/**
 * An SSE stream as a stream session's end: every ending is one `error` frame, then the end of the response. A
 * cap's refusal is sent as given; shutting down (also a refusal while the server stops) and a revoked key send the
 * surface's own frames.
 */
export function sseStreamEnd(sse: SseStream, frames: { goingAway: SseErrorData; revoked: SseErrorData }): SseStreamEnd {
  let ending = false;
  const fail = (error: SseErrorData): void => {
    if (ending || sse.closed) return;
    ending = true;
    void sse.send({ event: 'error', data: error });
    sse.end();
  };
  return {
    get closed() {
      return sse.closed;
    },
    get ending() {
      return ending || sse.closed;
    },
    onClose: (listener) => sse.onClose(listener),
    fail,
    refuse: (refusal) => fail(refusal.code === 'CONNECTION_ERROR' ? frames.goingAway : refusal),
    goingAway: () => fail(frames.goingAway),
    revoked: () => fail(frames.revoked),
  };
}
