import FindMyWay from 'find-my-way';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Which methods a path answers, from the routes the app registered (recordRouteOperations): the not-found handler
 * turns "path known, method not" into 405 with `Allow` instead of 404. The router is built at the first question,
 * when every route is registered.
 */
export function allowedMethodsOf(routes: () => readonly { methods: readonly string[]; url: string }[]): (path: string) => string[] {
  let router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | null = null;
  const build = () => {
    const r = FindMyWay({ maxParamLength: 256, ignoreTrailingSlash: false });
    const noop = () => undefined;
    for (const route of routes()) {
      for (const method of route.methods) {
        // Two plugins may register one pattern under the same method (prefix rules); the first one is enough here.
        if ((METHODS as readonly string[]).includes(method) && !r.hasRoute(method as FindMyWay.HTTPMethod, route.url)) {
          r.on(method as FindMyWay.HTTPMethod, route.url, noop);
        }
      }
    }
    return r;
  };
  return (path) => {
    router ??= build();
    return METHODS.filter((m) => router!.find(m, path) !== null);
  };
}
