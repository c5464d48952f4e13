import type { FastifyReply, FastifyRequest } from 'fastify';

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
