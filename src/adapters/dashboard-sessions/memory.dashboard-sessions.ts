import type { Clock } from '../../core/clock.ts';
import {
  DEFAULT_SESSION_LIMITS, sessionEndsAt, sessionLapsed, type DashboardSession, type DashboardSessionStore, type SessionLimits,
} from '../../core/dashboard-sessions/dashboard-session.port.ts';
import { randomToken, sessionIdDigest } from '../../core/dashboard-sessions/session-tokens.ts';

/** Sessions in this process's memory: one node (they do not survive a restart). */
export function createMemoryDashboardSessions(clock: Clock, limits: SessionLimits = DEFAULT_SESSION_LIMITS): DashboardSessionStore {
  const sessions = new Map<string, DashboardSession>();

  return {
    async create(apiKey) {
      const now = clock.now().getTime();
      if (sessions.size >= limits.maxSessions) {
        // At the cap (rare: a scan is fine): forget the sessions that have ended, then drop those nearest their end.
        for (const [id, s] of sessions) if (sessionLapsed(s, now, limits)) sessions.delete(id);
        while (sessions.size >= limits.maxSessions) {
          let nearest: DashboardSession | undefined;
          for (const s of sessions.values()) if (!nearest || sessionEndsAt(s, limits) < sessionEndsAt(nearest, limits)) nearest = s;
          sessions.delete(nearest!.idDigest);
        }
      }
      const cookieValue = randomToken();
      const session: DashboardSession = {
        idDigest: sessionIdDigest(cookieValue), apiKey, csrfToken: randomToken(), createdAt: now, lastSeenAt: now, workspace: 'default',
      };
      sessions.set(session.idDigest, session);
      return { cookieValue, session };
    },
    async find(cookieValue) {
      if (!cookieValue) return null;
      const id = sessionIdDigest(cookieValue);
      const s = sessions.get(id);
      if (!s) return null;
      const now = clock.now().getTime();
      if (sessionLapsed(s, now, limits)) {
        sessions.delete(id);
        return null;
      }
      s.lastSeenAt = now;
      return s;
    },
    async setWorkspace(session, workspace) {
      session.workspace = workspace;
      const held = sessions.get(session.idDigest);
      if (held) held.workspace = workspace;
    },
    async end(session) {
      sessions.delete(session.idDigest);
    },
  };
}
