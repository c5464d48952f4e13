import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.ts';

/**
 * Dashboard sessions, kept server-side in this process's memory. The cookie holds only a random session id (256
 * bits); the API key the person signed in with stays here, so it never sits in the cookie, and signing out (or the
 * session lapsing) ends it at once. The key is authenticated again on every request, so revoking or rotating it ends
 * its sessions too. Sessions do not survive a restart and are not shared between nodes: behind a load balancer, use
 * sticky sessions (docs/api.md, "Dashboard").
 */
export interface DashboardSession {
  /** The id as stored: SHA-256 of the cookie's value, so a dump of this map does not hold live cookies. */
  readonly idDigest: string;
  readonly apiKey: string;
  /** The per-session CSRF token every form of the session carries (`_csrf`). */
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** The workspace the switcher last chose (`default` at first). */
  workspace: string;
}

export interface SessionLimits {
  /** A session unused for this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however busy. */
  maxAgeMs: number;
  /** At most this many sessions at once: the oldest is dropped first. */
  maxSessions: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, maxAgeMs: 12 * 60 * 60_000, maxSessions: 10_000 };

export const randomToken = (): string => randomBytes(32).toString('base64url');
const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Constant-time comparison of two tokens (compared as digests, so their lengths leak nothing either). */
export function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export type SessionStore = ReturnType<typeof createSessionStore>;

export function createSessionStore(clock: Clock, limits: SessionLimits = DEFAULT_SESSION_LIMITS) {
  // A Map keeps insertion order: the first entry is the oldest session.
  const sessions = new Map<string, DashboardSession>();
  const lapsed = (s: DashboardSession, now: number) => now - s.lastSeenAt > limits.idleMs || now - s.createdAt > limits.maxAgeMs;

  return {
    /** Starts a session for `apiKey`; returns the cookie value (shown to the browser only). */
    create(apiKey: string): { cookieValue: string; session: DashboardSession } {
      const now = clock.now().getTime();
      for (const [id, s] of sessions) {
        if (sessions.size < limits.maxSessions && !lapsed(s, now)) break;
        sessions.delete(id);
      }
      const cookieValue = randomToken();
      const session: DashboardSession = {
        idDigest: digest(cookieValue), apiKey, csrfToken: randomToken(), createdAt: now, lastSeenAt: now, workspace: 'default',
      };
      sessions.set(session.idDigest, session);
      return { cookieValue, session };
    },
    /** The live session a cookie names (and marks it used), or null. */
    find(cookieValue: string | undefined): DashboardSession | null {
      if (!cookieValue) return null;
      const id = digest(cookieValue);
      const s = sessions.get(id);
      if (!s) return null;
      const now = clock.now().getTime();
      if (lapsed(s, now)) {
        sessions.delete(id);
        return null;
      }
      s.lastSeenAt = now;
      return s;
    },
    end(session: DashboardSession): void {
      sessions.delete(session.idDigest);
    },
    get size(): number {
      return sessions.size;
    },
  };
}
