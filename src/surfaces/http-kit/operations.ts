import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DeclaredOperation } from '../../core/operations/catalog.ts';
import { authorize } from '../../core/operations/runner.ts';
import { DomainError } from '../../core/errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, with the operation it runs (recordRouteOperations). */
    routeOperations: () => readonly RouteOperation[];
  }
  interface FastifyContextConfig {
    /**
     * The core operation the route runs (core/operations/catalog.ts): its permission is checked before the handler,
     * and what it audits and charges follows from it. A list: the route runs one of these, chosen by its input, and
     * authorizes the one it runs itself. null: a route that runs none (sign-in, assets).
     */
    operation?: DeclaredOperation;
    /** A WebSocket route: its handler authenticates the socket itself, with the same operation (authenticateSocket). */
    socketAuth?: true;
  }
}


/**
 * A `preHandler` hook: checks the permission of the route's operation for the authenticated caller, after the
 * request is validated and before the handler runs. A WebSocket route authenticates its socket itself
 * (authenticateSocket, with the same operation); any other route reaching here without a caller is refused.
 */
export async function operationGuard(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const operation = req.routeOptions.config.operation;
  // A list: the handler authorizes the one it runs (its input decides which).
  if (operation === null || operation === undefined || typeof operation !== 'string') return;
  if (req.principal === null) {
    if (req.routeOptions.config.socketAuth) return;
    throw new DomainError('UNAUTHENTICATED', 'API key is missing');
  }
  authorize(operation, req.principal);
}

/** A route as registered: its methods, URL pattern and the operation it declared (undefined: none). */
export interface RouteOperation {
  methods: string[];
  url: string;
  operation: DeclaredOperation | undefined;
}

/**
 * Records every route the app registers from now on, with its operation (an `onRoute` hook on the root, added
 * before the routes): what test/cross/operations.test.ts and the docs' permission table read.
 */
export function recordRouteOperations(app: FastifyInstance): () => readonly RouteOperation[] {
  const routes: RouteOperation[] = [];
  app.addHook('onRoute', (route) => {
    const operation = (route.config as { operation?: DeclaredOperation } | undefined)?.operation;
    routes.push({ methods: [route.method].flat(), url: route.url, operation });
  });
  return () => routes;
}
