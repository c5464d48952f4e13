import { prefixedId } from '../ids.ts';

/** What the registry needs of an open stream: who holds it and how to end it when the server stops. */
export interface StreamConnection {
  id: string;
  keyId: string;
  tenantId: string;
  /** `sse`, `search-live`, `analytics`: for logs and tests. */
  kind: string;
  /** Tells the client the server is going away (G8: a CONNECTION_ERROR frame; WebSocket: close 1001) and ends it. */
  shutdown(): void | Promise<void>;
}

/** Which bound refused a connection: the key's, the tenant's, this process's, or the server is stopping. */
export type StreamCap = 'key' | 'tenant' | 'process' | 'closing';

export type Acquired = { ok: true; release: () => void } | { ok: false; cap: StreamCap; open: number };

export interface StreamCaps {
  maxPerKey: number;
  maxPerTenant: number;
  /** All streams of this process, every tenant. */
  maxTotal: number;
}

export type ConnectionRegistry = ReturnType<typeof createConnectionRegistry>;

export const newConnectionId = (): string => prefixedId('conn', 20);

/**
 * The long-lived stream connections of this process, counted per API key (the spec's 5 concurrent connections per
 * key), per tenant (many keys of one tenant cannot take every slot) and in all (what one process can hold). One pool
 * for every real-time surface: a key may hold 5 streams in all, whatever their kind. Counts are per process (a
 * multi-node deployment would keep them in Redis).
 */
export function createConnectionRegistry(caps: StreamCaps) {
  const byKey = new Map<string, Set<StreamConnection>>();
  const byTenant = new Map<string, number>();
  let total = 0;
  let closing = false;

  return {
    /** Takes a slot for the connection; refused when a cap is reached (the narrowest is named) or the server is stopping. */
    acquire(conn: StreamConnection): Acquired {
      const held = byKey.get(conn.keyId) ?? new Set<StreamConnection>();
      const tenantOpen = byTenant.get(conn.tenantId) ?? 0;
      if (closing) return { ok: false, cap: 'closing', open: total };
      if (held.size >= caps.maxPerKey) return { ok: false, cap: 'key', open: held.size };
      if (tenantOpen >= caps.maxPerTenant) return { ok: false, cap: 'tenant', open: tenantOpen };
      if (total >= caps.maxTotal) return { ok: false, cap: 'process', open: total };
      held.add(conn);
      byKey.set(conn.keyId, held);
      byTenant.set(conn.tenantId, tenantOpen + 1);
      total += 1;
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          held.delete(conn);
          if (held.size === 0 && byKey.get(conn.keyId) === held) byKey.delete(conn.keyId);
          const left = (byTenant.get(conn.tenantId) ?? 1) - 1;
          if (left > 0) byTenant.set(conn.tenantId, left);
          else byTenant.delete(conn.tenantId);
          total -= 1;
        },
      };
    },

    count(keyId: string): number {
      return byKey.get(keyId)?.size ?? 0;
    },

    countTenant(tenantId: string): number {
      return byTenant.get(tenantId) ?? 0;
    },

    get size(): number {
      return total;
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
