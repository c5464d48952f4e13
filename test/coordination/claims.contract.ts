import { describe, expect, it } from 'vitest';
import type { Claims } from '../../src/core/coordination/claims.port.ts';

export interface ClaimsRig {
  claims: Claims;
  /** Another node's view of the same claims (the in-memory adapter has none: it is one node's). */
  peer?: Claims;
  /** Lets `ms` pass for the adapter's expiry (a manual clock moves; Redis needs real time). */
  elapse(ms: number): Promise<void>;
}

/** Long enough that a claim cannot expire between two calls of one test, even on a loaded machine. */
const HELD_MS = 60_000;

/** What every Claims adapter must do. */
export function claimsContract(name: string, make: () => ClaimsRig | Promise<ClaimsRig>): void {
  describe(`${name}: the Claims contract`, () => {
    it('grants a free name once, until the claim is released', async () => {
      const { claims } = await make();
      const token = await claims.claim('user:1', HELD_MS);
      expect(token).toEqual(expect.any(String));
      expect(await claims.claim('user:1', HELD_MS)).toBeNull();
      expect(await claims.claim('user:2', HELD_MS)).toEqual(expect.any(String));
      await claims.release('user:1', token!);
      expect(await claims.claim('user:1', HELD_MS)).toEqual(expect.any(String));
    });

    it('frees a claim when its time is up', async () => {
      const { claims, elapse } = await make();
      expect(await claims.claim('short', 30)).not.toBeNull();
      await elapse(120);
      expect(await claims.claim('short', HELD_MS)).not.toBeNull();
    });

    it('ignores a release by a token that no longer holds the name', async () => {
      const { claims, elapse } = await make();
      const stale = await claims.claim('lock', 30);
      await elapse(120);
      const current = await claims.claim('lock', HELD_MS);
      expect(current).not.toBeNull();
      await claims.release('lock', stale!);
      expect(await claims.claim('lock', HELD_MS)).toBeNull();
      await claims.release('lock', 'not-a-token');
      expect(await claims.claim('lock', HELD_MS)).toBeNull();
    });

    it('grants one of many concurrent claims on a name', async () => {
      const { claims, peer } = await make();
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 && peer ? peer : claims).claim('once', HELD_MS)));
      expect(all.filter((t) => t !== null)).toHaveLength(1);
    });
  });
}
