import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { VERSION } from './version.ts';

/** `/api/v1/memories/` (a prefix's root route) is documented as `/api/v1/memories`; both are served. */
const withoutTrailingSlash = (url: string): string => (url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url);

/**
 * A stable operationId from the method and path, unless the route names its own: `POST /api/v1/memories/{id}` →
 * `postApiV1MemoriesById`, `/{webhook_id}` → `ByWebhookId`. Paths differ between generations (`/api/v1/search` and `/v1/search`), so ids never clash.
 */
export function operationIdOf(method: string, url: string): string {
  const words = withoutTrailingSlash(url).split('/').filter(Boolean).flatMap((segment) => {
    const param = /^[:{](\w+)\}?$/.exec(segment);
    return param ? ['by', ...param[1]!.split('_')] : segment.split(/[^A-Za-z0-9]+/);
  });
  return method.toLowerCase() + words.filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The OpenAPI document at `/openapi.json` and the interactive reference at `/docs`. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Mnemo',
        version: VERSION,
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
        description: 'Memory, search and secrets service for AI applications and tools. Every surface takes the key as '
          + '`X-API-Key` or `Authorization: Bearer`. See docs/api.md for the choices made where the specification is silent.',
      },
      servers: [{ url: '/', description: 'this server' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const method = typeof route.method === 'string' ? route.method : route.method[0]!;
      const named = schema as { operationId?: string } | undefined;
      return {
        schema: { ...schema, operationId: named?.operationId ?? operationIdOf(method, url) },
        url: withoutTrailingSlash(url),
      };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
