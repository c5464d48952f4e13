import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.ts';
import type { DashboardSessionStore, SessionLimits } from '../../../src/core/dashboard-sessions/dashboard-session.port.ts';

export interface SessionStoreUnderTest {
  store: DashboardSessionStore;
  /** The same sessions as another node sees them (the store itself when sessions live in one process). */
  peer: DashboardSessionStore;
}

const LIMITS: SessionLimits = { idleMs: 60_000, maxAgeMs: 600_000, maxSessions: 3 };
const MINUTE = 60_000;

/** What every dashboard session store does, whichever adapter keeps the sessions. */
export function sessionStoreContract(name: string, open: (clock: ManualClock, limits: SessionLimits) => SessionStoreUnderTest | Promise<SessionStoreUnderTest>) {
  describe(`${name}: dashboard session store contract`, () => {
    const setUp = async () => {
      const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
      return { clock, ...(await open(clock, LIMITS)) };
    };

    it('finds a session by its cookie with its key, CSRF token and the default workspace, on any node', async () => {
      const { store, peer, clock } = await setUp();
      const { cookieValue, session } = await store.create('mk_live_the_key');
      expect(cookieValue).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(session.idDigest).not.toContain(cookieValue);
      clock.advance(1000);
      const found = await peer.find(cookieValue);
      expect(found).toMatchObject({ apiKey: 'mk_live_the_key', csrfToken: session.csrfToken, workspace: 'default', idDigest: session.idDigest });
      expect(found!.lastSeenAt).toBe(clock.now().getTime());
      expect(session.csrfToken).not.toBe(cookieValue);
    });

    it('finds nothing for a missing, unknown or altered cookie', async () => {
      const { store } = await setUp();
      const { cookieValue } = await store.create('mk_live_k');
      expect(await store.find(undefined)).toBeNull();
      expect(await store.find('')).toBeNull();
      expect(await store.find('x'.repeat(43))).toBeNull();
      const altered = (cookieValue[0] === 'A' ? 'B' : 'A') + cookieValue.slice(1);
      expect(await store.find(altered)).toBeNull();
    });

    it('keeps the workspace the switcher chose for the next pages, on any node', async () => {
      const { store, peer } = await setUp();
      const { cookieValue } = await store.create('mk_live_k');
      const first = (await store.find(cookieValue))!;
      await store.setWorkspace(first, 'research');
      expect(first.workspace).toBe('research');
      expect((await peer.find(cookieValue))!.workspace).toBe('research');
    });

    it('ends a session left unused for the idle limit, and keeps one in use', async () => {
      const { store, peer, clock } = await setUp();
      const idle = await store.create('mk_live_idle');
      const busy = await store.create('mk_live_busy');
      for (let i = 0; i < 3; i++) {
        clock.advance(LIMITS.idleMs - 1000);
        expect(await peer.find(busy.cookieValue)).not.toBeNull();
      }
      expect(await store.find(idle.cookieValue)).toBeNull();
      // Once ended, it stays ended even if time is wound back.
      clock.advance(-(3 * (LIMITS.idleMs - 1000)));
      expect(await store.find(idle.cookieValue)).toBeNull();
    });

    it('ends a session its maximum age after sign-in, however busy', async () => {
      const { store, clock } = await setUp();
      const { cookieValue } = await store.create('mk_live_k');
      for (let t = 0; t + MINUTE / 2 <= LIMITS.maxAgeMs; t += MINUTE / 2) {
        clock.advance(MINUTE / 2);
        expect(await store.find(cookieValue)).not.toBeNull();
      }
      clock.advance(MINUTE / 2);
      expect(await store.find(cookieValue)).toBeNull();
    });

    it('holds at most the cap of sessions, dropping the one nearest its end (not the oldest sign-in)', async () => {
      const { store, peer, clock } = await setUp();
      const a = await store.create('mk_live_a');
      clock.advance(10_000);
      const b = await store.create('mk_live_b');
      clock.advance(10_000);
      const c = await store.create('mk_live_c');
      clock.advance(10_000);
      // a, the first signed in, is used again: b is now the one that would end first.
      expect(await peer.find(a.cookieValue)).not.toBeNull();
      clock.advance(10_000);
      const d = await store.create('mk_live_d');
      expect(await peer.find(b.cookieValue)).toBeNull();
      for (const live of [a, c, d]) expect(await peer.find(live.cookieValue)).not.toBeNull();
    });

    it('counts a busy session near its maximum age as nearest its end at the cap', async () => {
      const { store, peer, clock } = await setUp();
      const old = await store.create('mk_live_old');
      const HALF_IDLE = LIMITS.idleMs / 2;
      while (clock.now().getTime() - old.session.createdAt < LIMITS.maxAgeMs - 2 * HALF_IDLE) {
        clock.advance(HALF_IDLE);
        expect(await store.find(old.cookieValue)).not.toBeNull();
      }
      // From here on a new session would end after old's maximum age.
      clock.advance(5000);
      const x = await store.create('mk_live_x');
      clock.advance(1000);
      const y = await store.create('mk_live_y');
      clock.advance(1000);
      // Used last, but its maximum age ends it before x and y would lapse unused.
      expect(await store.find(old.cookieValue)).not.toBeNull();
      const z = await store.create('mk_live_z');
      expect(await peer.find(old.cookieValue)).toBeNull();
      for (const live of [x, y, z]) expect(await peer.find(live.cookieValue)).not.toBeNull();
    });

    it('ends a session at sign-out on every node, and leaves the others', async () => {
      const { store, peer } = await setUp();
      const a = await store.create('mk_live_a');
      const b = await store.create('mk_live_b');
      await peer.end((await peer.find(a.cookieValue))!);
      expect(await store.find(a.cookieValue)).toBeNull();
      expect(await store.find(b.cookieValue)).not.toBeNull();
      // Choosing a workspace for an ended session brings nothing back.
      await store.setWorkspace(a.session, 'other');
      expect(await peer.find(a.cookieValue)).toBeNull();
    });
  });
}
