import { Type } from 'typebox';

/**
 * OpenAPI descriptions of the streaming answers. They document; they never shape an answer: SSE frames and WebSocket
 * messages are written to the socket, not serialized by Fastify.
 */
export const SSE_RESPONSE = {
  description: 'The stream: `text/event-stream` frames, as the operation describes',
  content: { 'text/event-stream': { schema: Type.String() } },
};

export const WEBSOCKET_UPGRADE_RESPONSE = Type.Null({
  description: 'Switching Protocols: the WebSocket opens. Refusals after the upgrade (bad key, scope, rate limit, bad '
    + 'parameters) are a `{type: "error", code, message}` message and a close frame (1008, or 1013 when rate limited).',
});
