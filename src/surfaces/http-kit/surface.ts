import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { ErrorHandler } from './plain-errors.ts';
import { requireDeclaredOperation } from '../../core/operations/catalog.ts';
import { operationGuard } from './operations.ts';

/**
 * One API generation as the server mounts it. `prefixes` are the URL prefixes it answers under: an error raised
 * outside its routes (an unknown path, a URL that cannot be decoded) is still rendered in its envelope when the URL
 * falls under one of them. `register` adds its routes, given the services its deps name; `errorHandler` renders
 * every error in its envelope.
 */
export interface Surface<Deps> {
  name: string;
  prefixes: readonly string[];
  register(app: FastifyInstance, deps: Deps): Promise<void>;
  errorHandler(clock: Clock): ErrorHandler;
}

/** A surface bound to its services, ready for the server's one list. */
export interface MountedSurface {
  surface: Surface<never>;
  register(app: FastifyInstance): Promise<void>;
}

/**
 * A surface bound to its services. Its routes are registered in a context of their own where each must name the
 * core operation it runs, whose permission is checked before the handler (operations.ts).
 */
export const mount = <Deps>(surface: Surface<Deps>, deps: Deps): MountedSurface => ({
  surface: surface as Surface<never>,
  register: async (app) => {
    await app.register(async (scoped) => {
      scoped.addHook('onRoute', requireDeclaredOperation(surface.name));
      scoped.addHook('preHandler', operationGuard);
      await surface.register(scoped, deps);
    });
  },
});
