import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** A PGlite served on loopback to any number of `pg` connections (several server processes, each with a pool). */
export interface SharedPglite {
  url: string;
  stop(): Promise<void>;
}

/** Extended-query messages (Parse, Bind, Describe, Execute, Close, Flush): the client's Sync is still to come. */
const EXTENDED_QUERY_PARTS = new Set([...'PBDECH'].map((c) => c.charCodeAt(0)));

/**
 * PGlite is one session. pglite-socket queues the messages of all connections into it and keeps a connection's
 * transaction to itself (it only serves the connection that opened a transaction until it ends), but it may
 * interleave two connections' extended-protocol messages: B's Parse lands between A's Parse and Bind, and A binds
 * B's statement. The `pg` driver sends every parameterised query as Parse, Bind, Describe, Execute, Sync, so with
 * several connections queries go wrong. This view of the database reports "in a transaction" also while a
 * connection is between its Parse and its Sync, which makes the queue keep serving that connection until the Sync:
 * one client's round trip, then the next. Test support only: a deployment has a real PostgreSQL server.
 */
function oneClientAtATime(pglite: PGlite): PGlite {
  let midExtendedQuery = false;
  return new Proxy(pglite, {
    get(target, property, receiver) {
      if (property === 'isInTransaction') return () => midExtendedQuery || target.isInTransaction();
      if (property === 'execProtocolRawStream') {
        return async (message: Uint8Array, options: Parameters<PGlite['execProtocolRawStream']>[1]) => {
          const result = await target.execProtocolRawStream(message, options);
          midExtendedQuery = EXTENDED_QUERY_PARTS.has(message[0]!);
          return result;
        };
      }
      if (property === 'exec') {
        // The socket server rolls back a disconnected client's transaction with exec: that client is gone.
        return async (sql: string) => {
          midExtendedQuery = false;
          return target.exec(sql);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Serves `pglite` on a free loopback port to up to `maxConnections` connections at once. */
export async function servePglite(pglite: PGlite, maxConnections = 32): Promise<SharedPglite> {
  const server = new PGLiteSocketServer({ db: oneClientAtATime(pglite), host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}
