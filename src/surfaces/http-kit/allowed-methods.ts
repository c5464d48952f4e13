import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Which methods a path answers, from every route the app registers (an `onRoute` hook added before the routes):
 * the not-found handler turns "path known, method not" into 405 with `Allow` instead of 404.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const router = FindMyWay({ maxParamLength: 256, ignoreTrailingSlash: false });
  const noop = () => undefined;
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m): m is typeof METHODS[number] => (METHODS as readonly string[]).includes(m));
    for (const method of methods) {
      // Two plugins may register the same pattern under different prefixes' rules; the first one is enough here.
      if (!router.hasRoute(method, route.url)) router.on(method, route.url, noop);
    }
  });
  return (path) => METHODS.filter((m) => router.find(m, path) !== null);
}
