/**
 * Dashboard sessions. The cookie holds only a random session id (256 bits); the API key the person signed in with
 * stays server-side, so it never sits in the cookie, and signing out (or the session lapsing) ends it at once. The
 * key is authenticated again on every request, so revoking or rotating it ends its sessions too. One node keeps its
 * sessions in memory; nodes sharing Redis keep them there, so any node serves any page (docs/api.md, "Dashboard").
 */
export interface DashboardSession {
  /** The id as stored: SHA-256 of the cookie's value, so a dump of the store does not hold live cookies. */
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
  /** At most this many sessions at once: past it, ended sessions are forgotten, then those nearest their end dropped. */
  maxSessions: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, maxAgeMs: 12 * 60 * 60_000, maxSessions: 10_000 };

export interface DashboardSessionStore {
  /** Starts a session for `apiKey`; returns the cookie value (shown to the browser only). */
  create(apiKey: string): Promise<{ cookieValue: string; session: DashboardSession }>;
  /** The live session a cookie names (and marks it used), or null. */
  find(cookieValue: string | undefined): Promise<DashboardSession | null>;
  /** Remembers the workspace the switcher chose, for the session's next pages (on any node). */
  setWorkspace(session: DashboardSession, workspace: string): Promise<void>;
  end(session: DashboardSession): Promise<void>;
}

/** Whether a session has ended by its limits at `now`. */
export const sessionLapsed = (s: Pick<DashboardSession, 'createdAt' | 'lastSeenAt'>, now: number, limits: SessionLimits): boolean =>
  now - s.lastSeenAt > limits.idleMs || now - s.createdAt > limits.maxAgeMs;

/** When a session ends unless used again: after the idle limit, and never past its maximum age. */
export const sessionEndsAt = (s: Pick<DashboardSession, 'createdAt' | 'lastSeenAt'>, limits: SessionLimits): number =>
  Math.min(s.lastSeenAt + limits.idleMs, s.createdAt + limits.maxAgeMs);
