import type { SlotTaken, StreamSlots } from '../../core/streams/stream-slots.port.ts';

/** Stream slots of this process only: right for one node. */
export function createMemoryStreamSlots(): StreamSlots {
  const byKey = new Map<string, number>();
  const byTenant = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string, by: number): void => {
    const n = (m.get(k) ?? 0) + by;
    if (n > 0) m.set(k, n);
    else m.delete(k);
  };

  return {
    async take(holder, caps): Promise<SlotTaken> {
      const keyOpen = byKey.get(holder.keyId) ?? 0;
      if (keyOpen >= caps.maxPerKey) return { ok: false, cap: 'key', open: keyOpen };
      const tenantOpen = byTenant.get(holder.tenantId) ?? 0;
      if (tenantOpen >= caps.maxPerTenant) return { ok: false, cap: 'tenant', open: tenantOpen };
      bump(byKey, holder.keyId, 1);
      bump(byTenant, holder.tenantId, 1);
      let released = false;
      return {
        ok: true,
        release: async () => {
          if (released) return;
          released = true;
          bump(byKey, holder.keyId, -1);
          bump(byTenant, holder.tenantId, -1);
        },
      };
    },
    countKey: async (keyId) => byKey.get(keyId) ?? 0,
    countTenant: async (tenantId) => byTenant.get(tenantId) ?? 0,
    async close() {
      byKey.clear();
      byTenant.clear();
    },
  };
}
