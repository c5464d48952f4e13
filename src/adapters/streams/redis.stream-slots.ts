import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { WarningLog } from '../../core/warning-log.ts';
import type { SlotTaken, StreamSlots } from '../../core/streams/stream-slots.port.ts';
import { luaScript } from '../redis/lua-script.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/*
 * Layout: each node keeps its own counts in a hash (`slots:node:{id}`, fields `k:{keyId}` and `t:{tenantId}`) that
 * expires unless the node's heartbeat renews it, and is listed in a sorted set of live nodes scored by when its
 * lease ends. A count is the sum over live nodes, so a node that crashes stops counting once its lease ends.
 * Time is Redis's (TIME), so nodes' clocks do not matter. The scripts touch keys they compute (the node hashes):
 * fine on one Redis server, not on Redis Cluster.
 */

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Sum of `field` over live nodes (after dropping the expired ones). */
const SUM = `
local function live_sum(nodes_key, hash_prefix, field)
  local total = 0
  for _, node in ipairs(redis.call('ZRANGE', nodes_key, 0, -1)) do
    total = total + tonumber(redis.call('HGET', hash_prefix .. node, field) or '0')
  end
  return total
end
`;

/** KEYS: live nodes, this node's hash. ARGV: node id, hash prefix, key field, tenant field, max/key, max/tenant, lease ms. */
const takeScript = luaScript(`${NOW}${SUM}
local lease = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
local by_key = live_sum(KEYS[1], ARGV[2], ARGV[3])
if by_key >= tonumber(ARGV[5]) then return {'key', by_key} end
local by_tenant = live_sum(KEYS[1], ARGV[2], ARGV[4])
if by_tenant >= tonumber(ARGV[6]) then return {'tenant', by_tenant} end
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
redis.call('PEXPIRE', KEYS[2], lease)
return {'ok', 0}
`);

/** KEYS: this node's hash. ARGV: key field, tenant field. */
const releaseScript = luaScript(`
for i = 1, 2 do
  if redis.call('HINCRBY', KEYS[1], ARGV[i], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`);

/**
 * KEYS: live nodes, this node's hash. ARGV: node id, lease ms, then field/count pairs of this node's open slots.
 * Renews the lease; when the hash was lost (a pause longer than the lease, a Redis restart) it is rebuilt from the
 * node's own counts, so the node's streams count again.
 */
const heartbeatScript = luaScript(`${NOW}
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 0 and #ARGV > 2 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 3))
end
redis.call('PEXPIRE', KEYS[2], lease)
return 1
`);

const countScript = luaScript(`${NOW}${SUM}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return live_sum(KEYS[1], ARGV[1], ARGV[2])
`);

export interface RedisStreamSlotsOptions {
  redis: Redis;
  warnings: WarningLog;
  keyPrefix?: string;
  /** How long a silent node's slots still count; the heartbeat renews the lease every third of it. */
  leaseMs?: number;
}

/** Stream slots shared by every node through Redis; a crashed node's slots are freed when its lease ends. */
export function createRedisStreamSlots(options: RedisStreamSlotsOptions): StreamSlots {
  const { redis, warnings } = options;
  const leaseMs = options.leaseMs ?? 30_000;
  const prefix = `${options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}slots:`;
  const nodesKey = `${prefix}nodes`;
  const hashPrefix = `${prefix}node:`;
  const nodeId = randomUUID();
  const nodeKey = hashPrefix + nodeId;
  /** This node's open slots per field: the truth the heartbeat restores the hash from. */
  const mine = new Map<string, number>();
  const bump = (field: string, by: number): void => {
    const n = (mine.get(field) ?? 0) + by;
    if (n > 0) mine.set(field, n);
    else mine.delete(field);
  };

  let closed = false;
  const heartbeat = setInterval(() => {
    const pairs = [...mine].flatMap(([field, n]) => [field, n]);
    heartbeatScript(redis, [nodesKey, nodeKey], [nodeId, leaseMs, ...pairs])
      .catch((err: unknown) => warnings.warn({ err }, 'stream slot heartbeat failed'));
  }, Math.max(10, Math.floor(leaseMs / 3)));
  heartbeat.unref();

  const count = async (field: string): Promise<number> =>
    Number(await countScript(redis, [nodesKey], [hashPrefix, field]));

  return {
    async take(holder, caps): Promise<SlotTaken> {
      if (closed) throw new Error('stream slots are closed');
      const keyField = `k:${holder.keyId}`;
      const tenantField = `t:${holder.tenantId}`;
      const [verdict, open] = await takeScript(redis, [nodesKey, nodeKey], [
        nodeId, hashPrefix, keyField, tenantField, caps.maxPerKey, caps.maxPerTenant, leaseMs,
      ]) as [string, number];
      if (verdict === 'key' || verdict === 'tenant') return { ok: false, cap: verdict, open: Number(open) };
      bump(keyField, 1);
      bump(tenantField, 1);
      let released = false;
      return {
        ok: true,
        release: async () => {
          if (released) return;
          released = true;
          bump(keyField, -1);
          bump(tenantField, -1);
          await releaseScript(redis, [nodeKey], [keyField, tenantField]);
        },
      };
    },
    countKey: (keyId) => count(`k:${keyId}`),
    countTenant: (tenantId) => count(`t:${tenantId}`),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      mine.clear();
      // Redis unreachable: the lease frees this node's slots anyway, and a shutdown need not wait out the reconnections.
      if (redis.status !== 'ready') return;
      await redis.multi().zrem(nodesKey, nodeId).del(nodeKey).exec();
    },
  };
}
