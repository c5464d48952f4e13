import type { FastifyReply } from 'fastify';

/** When the names scheduled for removal in version 2.0.0 go (the spec's Versioning list). */
export const SUNSET_V2 = new Date(Date.UTC(2027, 10, 1)).toUTCString(); // Mon, 01 Nov 2027 00:00:00 GMT

/**
 * Marks an answer as using something deprecated (RFC 9745 `Deprecation`, RFC 8594 `Sunset`), with a link to the
 * docs. `sunset: false` for what is deprecated without a removal date (e.g. `includeVector`).
 */
export function markDeprecated(reply: FastifyReply, options: { sunset: boolean } = { sunset: true }): FastifyReply {
  reply.header('Deprecation', 'true');
  if (options.sunset) reply.header('Sunset', SUNSET_V2);
  return reply.header('Link', '</docs>; rel="deprecation"');
}
