import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type LuaScript = (redis: Redis, keys: string[], args: Array<string | number>) => Promise<unknown>;

/**
 * A Lua script run by its SHA (EVALSHA), sent in full (EVAL) only when the server does not know it yet (after a
 * restart or on first use), so each call carries a 40-byte digest instead of the script.
 */
export function luaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}
