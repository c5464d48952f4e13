import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import {
  DEFAULT_SESSION_LIMITS, sessionLapsed, type DashboardSession, type DashboardSessionStore, type SessionLimits,
} from '../../core/dashboard-sessions/dashboard-session.port.ts';
import { randomToken, sessionIdDigest } from '../../core/dashboard-sessions/session-tokens.ts';
import { luaScript } from '../redis/lua-script.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/*
 * Layout: one hash a session (`dashboard:session:{sha256 of the cookie}`: sealed key, CSRF token, created, last seen,
 * workspace) that expires after the idle limit unless used, and a sorted set of session ids by sign-in time for the
 * cap on sessions. The API key is sealed (AES-256-GCM) with a key derived from the cookie's value, which Redis never
 * holds: a dump of Redis opens no session and shows no API key. Time checks use the app's clock (as on one node); the
 * hash's TTL only clears what nobody uses. The create script touches hashes it computes: one Redis server, not Cluster.
 */

/**
 * KEYS: the session's hash, the index. ARGV: id, now, sealed key, CSRF token, idle ms, max sessions, hash prefix,
 * oldest sign-in kept. At the cap, sessions that have ended (hash gone, or unused past the idle limit) are forgotten
 * first, then the oldest live ones dropped.
 */
const createScript = luaScript(`
local index, prefix, max, now, idle = KEYS[2], ARGV[7], tonumber(ARGV[6]), tonumber(ARGV[2]), tonumber(ARGV[5])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. ARGV[8])) do redis.call('DEL', prefix .. id) end
redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. ARGV[8])
if redis.call('ZCARD', index) >= max then
  for _, id in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    local seen = redis.call('HGET', prefix .. id, 'seen')
    if not seen or now - tonumber(seen) > idle then
      redis.call('DEL', prefix .. id)
      redis.call('ZREM', index, id)
    end
  end
  while redis.call('ZCARD', index) >= max do
    local oldest = redis.call('ZPOPMIN', index)
    redis.call('DEL', prefix .. oldest[1])
  end
end
redis.call('HSET', KEYS[1], 'key', ARGV[3], 'csrf', ARGV[4], 'created', ARGV[2], 'seen', ARGV[2], 'workspace', 'default')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', index, ARGV[2], ARGV[1])
return 1
`);

/** KEYS: the session's hash. ARGV: field, value, idle ms. Writes only to a session that still exists. */
const touchScript = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

const SEAL_INFO = 'mnemo dashboard session: api key';

function sealingKey(cookieValue: string): Buffer {
  return Buffer.from(hkdfSync('sha256', cookieValue, '', SEAL_INFO, 32));
}

function seal(apiKey: string, cookieValue: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(cookieValue), iv);
  const body = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The key sealed for this cookie, or null when the cookie is not the one it was sealed for (or the text is damaged). */
function unseal(sealed: string, cookieValue: string): string | null {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(cookieValue), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export interface RedisDashboardSessionsOptions {
  redis: Redis;
  clock: Clock;
  limits?: SessionLimits;
  keyPrefix?: string;
}

/** Sessions every node sharing this Redis can serve (`MNEMO_REDIS_URL`). */
export function createRedisDashboardSessions(options: RedisDashboardSessionsOptions): DashboardSessionStore {
  const { redis, clock } = options;
  const limits = options.limits ?? DEFAULT_SESSION_LIMITS;
  const hashPrefix = `${options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}dashboard:session:`;
  const index = `${options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}dashboard:sessions`;
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
      await createScript(redis, [hashOf(session.idDigest), index], [
        session.idDigest, now, seal(apiKey, cookieValue), session.csrfToken, limits.idleMs, limits.maxSessions, hashPrefix, now - limits.maxAgeMs,
      ]);
      return { cookieValue, session };
    },
    async find(cookieValue) {
      if (!cookieValue) return null;
      const idDigest = sessionIdDigest(cookieValue);
      const held = await redis.hgetall(hashOf(idDigest));
      const apiKey = held.key === undefined ? null : unseal(held.key, cookieValue);
      if (apiKey === null || held.csrf === undefined) return null;
      const session: DashboardSession = {
        idDigest, apiKey, csrfToken: held.csrf, createdAt: Number(held.created), lastSeenAt: Number(held.seen), workspace: held.workspace ?? 'default',
      };
      const now = clock.now().getTime();
      if (!Number.isFinite(session.createdAt) || !Number.isFinite(session.lastSeenAt) || sessionLapsed(session, now, limits)) {
        await end(session);
        return null;
      }
      session.lastSeenAt = now;
      await touchScript(redis, [hashOf(idDigest)], ['seen', now, limits.idleMs]);
      return session;
    },
    async setWorkspace(session, workspace) {
      session.workspace = workspace;
      await touchScript(redis, [hashOf(session.idDigest)], ['workspace', workspace, limits.idleMs]);
    },
    end,
  };
}
