import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import {
  DEFAULT_SESSION_LIMITS, sessionEndsAt, sessionLapsed, type DashboardSession, type DashboardSessionStore, type SessionLimits,
} from '../../core/dashboard-sessions/dashboard-session.port.ts';
import { openSession, sealSession } from '../../core/dashboard-sessions/session-seal.ts';
import { randomToken, sessionIdDigest } from '../../core/dashboard-sessions/session-tokens.ts';
import type { Keyring } from '../../core/secrets/envelope.ts';
import { luaScript } from '../redis/lua-script.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/*
 * Layout: one hash a session (`dashboard:session:{sha256 of the cookie}`: the sealed fields, last seen, workspace)
 * that expires after the idle limit unless used, and a sorted set of session ids by when each ends, for the cap. The API
 * key, CSRF token and sign-in time are sealed (core/dashboard-sessions/session-seal.ts) under a key derived from the
 * cookie, which Redis never holds, and a master key. Time checks use the app's clock (as on one node); the TTL only
 * clears what nobody uses. The create script touches hashes it computes: one Redis server, not Redis Cluster.
 */

/**
 * KEYS: the session's hash, the index. ARGV: id, now, sealed fields, idle ms, max sessions, hash prefix, ends at. At
 * the cap, sessions that have ended are forgotten (a range of the index, not a scan), then those nearest their end
 * dropped.
 */
const createScript = luaScript(`
local index, prefix, now, max = KEYS[2], ARGV[6], tonumber(ARGV[2]), tonumber(ARGV[5])
if redis.call('ZCARD', index) >= max then
  local ended = redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. now)
  for _, id in ipairs(ended) do redis.call('DEL', prefix .. id) end
  if #ended > 0 then redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. now) end
  local over = redis.call('ZCARD', index) - max + 1
  if over > 0 then
    local dropped = redis.call('ZPOPMIN', index, over)
    for i = 1, #dropped, 2 do redis.call('DEL', prefix .. dropped[i]) end
  end
end
redis.call('HSET', KEYS[1], 'sealed', ARGV[3], 'seen', ARGV[2], 'workspace', 'default')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', index, ARGV[7], ARGV[1])
return 1
`);

/**
 * KEYS: the session's hash, the index. ARGV: field, value, idle ms, id, new end ('' to leave it). Writes only to a
 * session that still exists, so one ended on another node is never brought back.
 */
const touchScript = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[2], 'XX', ARGV[5], ARGV[4]) end
return 1
`);

export interface RedisDashboardSessionsOptions {
  redis: Redis;
  clock: Clock;
  /** The master keyring: a session's sealing key needs its active key (and the one that sealed it to open). */
  keyring: () => Keyring;
  limits?: SessionLimits;
  keyPrefix?: string;
}

/** Sessions every node sharing this Redis can serve (`MNEMO_REDIS_URL`). */
export function createRedisDashboardSessions(options: RedisDashboardSessionsOptions): DashboardSessionStore {
  const { redis, clock, keyring } = options;
  const limits = options.limits ?? DEFAULT_SESSION_LIMITS;
  const prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const hashPrefix = `${prefix}dashboard:session:`;
  const index = `${prefix}dashboard:sessions`;
  const hashOf = (idDigest: string) => hashPrefix + idDigest;
  const end = async (session: Pick<DashboardSession, 'idDigest'>): Promise<void> => {
    await redis.multi().del(hashOf(session.idDigest)).zrem(index, session.idDigest).exec();
  };

  return {
    async create(apiKey) {
      const now = clock.now().getTime();
      const cookieValue = randomToken();
      const session: DashboardSession = {
        idDigest: sessionIdDigest(cookieValue), apiKey, csrfToken: randomToken(), createdAt: now, lastSeenAt: now, workspace: 'default',
      };
      const sealed = sealSession(keyring(), cookieValue, session.idDigest, { apiKey, csrfToken: session.csrfToken, createdAt: now });
      await createScript(redis, [hashOf(session.idDigest), index], [
        session.idDigest, now, sealed, limits.idleMs, limits.maxSessions, hashPrefix, sessionEndsAt(session, limits),
      ]);
      return { cookieValue, session };
    },
    async find(cookieValue) {
      if (!cookieValue) return null;
      const idDigest = sessionIdDigest(cookieValue);
      const held = await redis.hgetall(hashOf(idDigest));
      if (held.sealed === undefined) return null;
      const fields = openSession(keyring(), cookieValue, idDigest, held.sealed);
      if (fields === null) return null;
      const session: DashboardSession = { idDigest, ...fields, lastSeenAt: Number(held.seen), workspace: held.workspace ?? 'default' };
      const now = clock.now().getTime();
      if (!Number.isFinite(session.lastSeenAt) || sessionLapsed(session, now, limits)) {
        await end(session);
        return null;
      }
      session.lastSeenAt = now;
      await touchScript(redis, [hashOf(idDigest), index], ['seen', now, limits.idleMs, idDigest, sessionEndsAt(session, limits)]);
      return session;
    },
    async setWorkspace(session, workspace) {
      session.workspace = workspace;
      await touchScript(redis, [hashOf(session.idDigest), index], ['workspace', workspace, limits.idleMs, session.idDigest, '']);
    },
    end,
  };
}
