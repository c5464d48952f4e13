import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived: deadlines (the search timeout) count from here. */
    arrivedAt: number;
  }
}

/** Stamps every request with its arrival time, before any other hook (authentication, load shedding) runs. */
export function recordArrival(app: FastifyInstance): void {
  app.decorateRequest('arrivedAt', 0);
  app.addHook('onRequest', (req, _reply, done) => {
    req.arrivedAt = performance.now();
    done();
  });
}
