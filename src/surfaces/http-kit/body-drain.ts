import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface DrainLimits {
  /** Unread body bytes read and discarded before answering; 0 answers at once and closes. */
  maxBytes: number;
  /** How long the client may take to finish sending before the answer goes out and the connection closes. */
  timeoutMs: number;
}

/**
 * An onSend hook for answers given before the request body was read (413 over the body limit, 401 before the body,
 * 415 …). Node closes such a connection as soon as the answer is written, while a client such as Node's `fetch`
 * (undici) is still sending: it then sees `write EPIPE` instead of the answer. So the rest of the body is read and
 * thrown away first — at most `maxBytes` and `timeoutMs` — and the answer goes out once the client has finished;
 * past either bound the answer goes out at once and the connection closes, so no client can make the server read
 * without end.
 */
export function drainUnreadBody(limits: DrainLimits) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const raw = req.raw;
    // `complete` is false only on a real socket's request whose body is still arriving (inject() has no such field).
    if (raw.complete !== false || raw.destroyed || raw.readableEnded) return payload;
    const declared = Number(raw.headers['content-length']);
    const drained = Number.isFinite(declared) && declared > limits.maxBytes ? false : await discardBody(raw, limits);
    // A drained body leaves the connection clean; otherwise the client is still sending, and it must end.
    if (!drained) reply.header('connection', 'close');
    return payload;
  };
}

/** Reads and discards the rest of the body; true once it ended within the limits. */
function discardBody(raw: IncomingMessage, limits: DrainLimits): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      // Bytes still arriving after an early answer are dropped by the socket's close, not buffered.
      if (!ended) raw.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limits.maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), limits.timeoutMs);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    raw.resume();
  });
}
