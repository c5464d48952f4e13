/**
 * Stream slots counted across every node: the spec's concurrent connections per API key, and the per-tenant bound,
 * hold for the whole deployment rather than per process. (The per-process bound stays with the in-process
 * ConnectionRegistry: it is about what one process can hold.)
 */
export interface SlotHolder {
  keyId: string;
  tenantId: string;
}

export interface SlotCaps {
  maxPerKey: number;
  maxPerTenant: number;
}

export type SlotTaken =
  | { ok: true; release: () => Promise<void> }
  | { ok: false; cap: 'key' | 'tenant'; open: number };

export interface StreamSlots {
  /** Takes one slot for the holder unless its key or its tenant is at its cap (the key's is named first). */
  take(holder: SlotHolder, caps: SlotCaps): Promise<SlotTaken>;
  /** Slots open for a key / a tenant, on every node. */
  countKey(keyId: string): Promise<number>;
  countTenant(tenantId: string): Promise<number>;
  /** Gives back this node's slots and stops its upkeep (server shutdown). */
  close(): Promise<void>;
}
