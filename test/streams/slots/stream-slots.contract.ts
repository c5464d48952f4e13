import { describe, expect, it } from 'vitest';
import type { SlotTaken, StreamSlots } from '../../../src/core/streams/stream-slots.port.ts';

/** Fresh, empty slots; `peer` is another node's view of the same slots where the adapter shares them. */
export type SlotsFactory = () => Promise<{ slots: StreamSlots; peer?: StreamSlots }> | { slots: StreamSlots; peer?: StreamSlots };

const taken = (s: SlotTaken): Extract<SlotTaken, { ok: true }> => {
  if (!s.ok) throw new Error(`expected a slot, got the ${s.cap} cap`);
  return s;
};

/** What every StreamSlots adapter must do. */
export function streamSlotsContract(name: string, make: SlotsFactory): void {
  describe(`${name}: the StreamSlots contract`, () => {
    const caps = { maxPerKey: 2, maxPerTenant: 3 };

    it('caps a key, then its tenant across keys; a release frees both, once', async () => {
      const { slots } = await make();
      const a = taken(await slots.take({ keyId: 'k1', tenantId: 't1' }, caps));
      taken(await slots.take({ keyId: 'k1', tenantId: 't1' }, caps));
      expect(await slots.take({ keyId: 'k1', tenantId: 't1' }, caps)).toEqual({ ok: false, cap: 'key', open: 2 });
      taken(await slots.take({ keyId: 'k2', tenantId: 't1' }, caps));
      expect(await slots.take({ keyId: 'k3', tenantId: 't1' }, caps)).toEqual({ ok: false, cap: 'tenant', open: 3 });
      expect(await slots.take({ keyId: 'k9', tenantId: 't2' }, caps)).toMatchObject({ ok: true });
      expect([await slots.countKey('k1'), await slots.countTenant('t1')]).toEqual([2, 3]);
      await a.release();
      await a.release();
      expect([await slots.countKey('k1'), await slots.countTenant('t1')]).toEqual([1, 2]);
      expect(await slots.take({ keyId: 'k3', tenantId: 't1' }, caps)).toMatchObject({ ok: true });
    });

    it('grants exactly the cap of many concurrent takes, on one node or two', async () => {
      const { slots, peer } = await make();
      const all = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        (i % 2 && peer ? peer : slots).take({ keyId: 'burst', tenantId: 'tb' }, { maxPerKey: 5, maxPerTenant: 100 })));
      expect(all.filter((s) => s.ok)).toHaveLength(5);
      expect(await slots.countKey('burst')).toBe(5);
    });

    it('gives back its slots on close', async () => {
      const { slots, peer } = await make();
      taken(await slots.take({ keyId: 'kc', tenantId: 'tc' }, caps));
      await slots.close();
      expect(await (peer ?? slots).countKey('kc')).toBe(0);
    });
  });
}
