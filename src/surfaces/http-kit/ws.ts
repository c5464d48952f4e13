import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { OperationName } from '../../core/operations/catalog.ts';
import { authorize } from '../../core/operations/runner.ts';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { isDomainError } from '../../core/errors.ts';
import { readCredential } from './auth.ts';
import type { StreamRefusal } from './stream-refusal.ts';
import type { StreamEnd } from './stream-session.ts';

/** WebSocket close codes used by the real-time surfaces (RFC 6455 §7.4.1). */
export const WS_CLOSE = {
  normal: 1000,
  /** The server is shutting down. */
  goingAway: 1001,
  /** Authentication failed, the key was revoked or expired, or lacks the scope. */
  policy: 1008,
  /** Too many connections for the key: try again later. */
  tryAgainLater: 1013,
} as const;

/** Errors its peer caused: ws's protocol refusals (`WS_ERR_*`: a message over maxPayload, a bad frame), a dropped connection. */
const isClientSocketError = (err: Error & { code?: unknown }): boolean =>
  typeof err.code === 'string' && (err.code.startsWith('WS_ERR_') || err.code === 'ECONNRESET' || err.code === 'EPIPE');

/**
 * The WebSocket plugin's error handler: a client's mistake is info without a stack (ws has closed the socket with the
 * protocol's code, 1009 for a message too big), anything else an error, its socket terminated as the plugin's default does.
 */
export function wsErrorHandler(error: Error, socket: WebSocket, req: FastifyRequest): void {
  if (isClientSocketError(error)) {
    req.log.info({ code: (error as { code?: unknown }).code, reason: error.message }, 'WebSocket closed: client protocol error');
    return;
  }
  req.log.error({ err: error }, 'WebSocket handler failed');
  socket.terminate();
}

/**
 * The key of a WebSocket upgrade: `Authorization: Bearer <key>`, or — for browsers, which cannot set headers on a
 * WebSocket — the `access_token` query parameter. The header wins when both are given.
 */
export function readWsCredential(req: FastifyRequest): string | undefined {
  const fromHeader = readCredential(req, 'bearer');
  if (fromHeader) return fromHeader;
  const q = req.query as Record<string, unknown> | undefined;
  const token = q?.access_token;
  return typeof token === 'string' && token.length > 0 ? token : undefined;
}

/** Sends a JSON message when the socket is open; false otherwise. */
export function sendJson(socket: WebSocket, message: unknown): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  socket.send(JSON.stringify(message));
  return true;
}

/** Closes with a code and a reason (trimmed to the protocol's 123 bytes). */
export function closeWith(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.CLOSED || socket.readyState === socket.CLOSING) return;
  let r = reason;
  while (Buffer.byteLength(r) > 123) r = r.slice(0, -1);
  socket.close(code, r);
}

/** Refuses a stream: the error message, then close 1001 (shutting down) or 1013 (a connection cap: try again later). */
export function refuseSocket(socket: WebSocket, refusal: StreamRefusal): void {
  sendJson(socket, { type: 'error', ...refusal });
  closeWith(socket, refusal.code === 'CONNECTION_ERROR' ? WS_CLOSE.goingAway : WS_CLOSE.tryAgainLater, refusal.message);
}

/**
 * A WebSocket as a stream session's end (stream-session.ts): a refusal is an error message then close 1013 (a cap)
 * or 1001 (shutting down); shutdown closes with 1001; a revoked key gets `{type: "error", code: "AUTH_ERROR"}` and
 * close 1008.
 */
export function wsStreamEnd(socket: WebSocket): StreamEnd {
  return {
    get closed() {
      return socket.readyState === socket.CLOSING || socket.readyState === socket.CLOSED;
    },
    onClose(listener) {
      if (socket.readyState === socket.CLOSED) listener();
      else socket.once('close', listener);
    },
    refuse: (refusal) => refuseSocket(socket, refusal),
    goingAway: () => closeWith(socket, WS_CLOSE.goingAway, 'server shutting down'),
    revoked(message) {
      sendJson(socket, { type: 'error', code: 'AUTH_ERROR', message });
      closeWith(socket, WS_CLOSE.policy, 'API key is no longer valid');
    },
  };
}

/**
 * Authenticates a WebSocket at connect: a valid key with the permission of `operation`, within the gateway limit. On failure it tells
 * the client (`{type: "error", code}`) and closes (1013 when rate limited, else 1008); returns null then.
 */
export async function authenticateSocket(
  deps: { apiKeys: Pick<ApiKeyService, 'authenticate'>; limits: Pick<LimitsService, 'gateway'> },
  credential: string | undefined, socket: WebSocket, operation: OperationName,
): Promise<Principal | null> {
  try {
    const principal = await deps.apiKeys.authenticate(credential);
    authorize(operation, principal);
    await deps.limits.gateway(principal);
    return principal;
  } catch (err) {
    if (!isDomainError(err)) throw err;
    const limited = err.code === 'RATE_LIMITED' || err.code === 'QUOTA_EXCEEDED';
    const code = limited ? 'RATE_LIMITED' : err.code === 'PERMISSION_DENIED' ? 'PERMISSION_DENIED' : 'UNAUTHORIZED';
    sendJson(socket, { type: 'error', code, message: err.message });
    closeWith(socket, limited ? WS_CLOSE.tryAgainLater : WS_CLOSE.policy, err.message);
    return null;
  }
}
