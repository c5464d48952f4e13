import type { FastifyInstance } from 'fastify';
import type { OAuthService } from '../../core/oauth/oauth.service.ts';
import { bodyField } from './errors.ts';
import { OAUTH_PATHS } from './metadata.routes.ts';

/** RFC 7009 revocation: 200 with an empty body, for an unknown token too (§2.2). */
export function revokeRoute(app: FastifyInstance, oauth: Pick<OAuthService, 'revokeToken'>): void {
  app.post(OAUTH_PATHS.revoke, { schema: { hide: true } }, async (req, reply) => {
    await oauth.revokeToken({ clientId: bodyField(req, 'client_id'), token: bodyField(req, 'token') },
      { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id });
    return reply.header('Cache-Control', 'no-store').status(200).send();
  });
}
