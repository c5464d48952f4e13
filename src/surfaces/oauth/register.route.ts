import type { FastifyInstance } from 'fastify';
import type { OAuthService } from '../../core/oauth/oauth.service.ts';
import { OAUTH_PATHS } from './metadata.routes.ts';

/** RFC 7591 dynamic client registration: public clients (`none`), answered 201 with what was registered. */
export function registerRoute(app: FastifyInstance, oauth: Pick<OAuthService, 'register'>): void {
  app.post(OAUTH_PATHS.register, { schema: { hide: true } }, async (req, reply) => {
    const client = await oauth.register(req.body, req.ip);
    return reply.status(201).header('Cache-Control', 'no-store').send({
      client_id: client.id,
      client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });
}
