import { createMemoryClaims } from '../../src/adapters/coordination/memory.claims.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { claimsContract } from './claims.contract.ts';

claimsContract('in-memory claims', () => {
  const clock = new ManualClock();
  return { claims: createMemoryClaims(clock), elapse: async (ms) => clock.advance(ms) };
});
