import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Claims } from '../../core/coordination/claims.port.ts';

/** Past this many names, expired claims are swept before a new one is added. */
const SWEEP_AT = 10_000;

/** Claims in this process's memory, timed by `clock`: exclusive within one node. */
export function createMemoryClaims(clock: Clock): Claims {
  const held = new Map<string, { token: string; until: number }>();

  function sweep(now: number): void {
    for (const [name, c] of held) if (c.until <= now) held.delete(name);
  }

  return {
    async claim(name, ttlMs) {
      const now = clock.now().getTime();
      const current = held.get(name);
      if (current && current.until > now) return null;
      if (held.size >= SWEEP_AT) sweep(now);
      const token = randomUUID();
      held.set(name, { token, until: now + ttlMs });
      return token;
    },
    async release(name, token) {
      if (held.get(name)?.token === token) held.delete(name);
    },
  };
}
