import { prefixedId } from '../ids.ts';

/** What the registry needs of an open stream: who holds it and how to end it when the server stops. */
export interface StreamConnection {
  id: string;
  keyId: string;
  /** `sse`, `search-live`, `analytics`: for logs and tests. */
  kind: string;
  /** Tells the client the server is going away (G8: a CONNECTION_ERROR frame; WebSocket: close 1001) and ends it. */
  shutdown(): void | Promise<void>;
}

export type Acquired = { ok: true; release: () => void } | { ok: false; open: number };

export type ConnectionRegistry = ReturnType<typeof createConnectionRegistry>;

export const newConnectionId = (): string => prefixedId('conn', 20);

/**
 * The long-lived stream connections of this process, counted per API key (the spec's 5 concurrent connections per
 * key). One pool for every real-time surface: a key may hold 5 streams in all, whatever their kind. Counts are per
 * process (a multi-node deployment would keep them in Redis).
 */
export function createConnectionRegistry(options: { maxPerKey: number }) {
  const byKey = new Map<string, Set<StreamConnection>>();
  let closing = false;

  return {
    /** Takes a slot for the connection; refused when the key already holds `maxPerKey` or the server is stopping. */
    acquire(conn: StreamConnection): Acquired {
      const held = byKey.get(conn.keyId) ?? new Set<StreamConnection>();
      if (closing || held.size >= options.maxPerKey) return { ok: false, open: held.size };
      held.add(conn);
      byKey.set(conn.keyId, held);
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          held.delete(conn);
          if (held.size === 0 && byKey.get(conn.keyId) === held) byKey.delete(conn.keyId);
        },
      };
    },

    count(keyId: string): number {
      return byKey.get(keyId)?.size ?? 0;
    },

    get size(): number {
      let n = 0;
      for (const held of byKey.values()) n += held.size;
      return n;
    },

    get closing(): boolean {
      return closing;
    },

    /** Server shutdown: refuses new connections and tells every open one to end. */
    async shutdown(): Promise<void> {
      closing = true;
      const all = [...byKey.values()].flatMap((held) => [...held]);
      await Promise.allSettled(all.map(async (c) => c.shutdown()));
    },
  };
}
