import { Redis } from 'ioredis';
import type { WarningLog } from '../../core/warning-log.ts';

export type { Redis } from 'ioredis';

/** Where every key this service writes lives, so one Redis can serve several deployments (or tests) apart. */
export const DEFAULT_REDIS_KEY_PREFIX = 'mnemo:';

/**
 * A client for the shared state of a multi-node deployment. A command fails after one retry instead of waiting in
 * ioredis's offline queue for 20 reconnections: a request blocked on an unreachable Redis should fail promptly.
 * Connection errors are reported once per outage (ioredis repeats them on every reconnection attempt).
 */
export function createRedisClient(url: string, warnings: WarningLog): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000, enableAutoPipelining: true });
  let reachable = true;
  redis.on('error', (err: Error) => {
    if (!reachable) return;
    reachable = false;
    warnings.warn({ err: err.message }, 'Redis is unreachable; shared limits and events fail until it is back');
  });
  redis.on('ready', () => { reachable = true; });
  return redis;
}
