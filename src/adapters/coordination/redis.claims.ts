import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Claims } from '../../core/coordination/claims.port.ts';
import { luaScript } from '../redis/lua-script.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/** Deletes the key only while it still holds this token: a claim that expired and was taken by another node stays. */
const releaseScript = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Claims shared by every node: `SET name token NX PX ttl`, released by compare-and-delete. Expiry is Redis's own
 * (real time), so a node that dies holding a claim frees it after `ttlMs`.
 */
export function createRedisClaims(deps: { redis: Redis; keyPrefix?: string }): Claims {
  const { redis } = deps;
  const prefix = `${deps.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}claim:`;
  return {
    async claim(name, ttlMs) {
      const token = randomUUID();
      const set = await redis.set(prefix + name, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
      return set === 'OK' ? token : null;
    },
    async release(name, token) {
      await releaseScript(redis, [prefix + name], [token]);
    },
  };
}
