import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromEnv, masterKeyId } from '../../src/adapters/secrets/master-keyring.ts';
import { CliError } from '../../src/app/cli.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createStorage } from '../../src/app/storage.factory.ts';
import { verifyMemoryEventSignature, verifyMnemoSignature } from '../../src/client/webhook-receiver.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { mnemo } from '../support/cli.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import { g11 } from '../g11/client.ts';

const newKey = () => randomBytes(32).toString('base64');
const idOf = (key: string) => masterKeyId(Buffer.from(key, 'base64'));
/** Twelve secrets of two versions: with --page-size 5, several pages of each kind. */
const NAMES = Array.from({ length: 12 }, (_, i) => `secret-${i}`);

/**
 * `mnemo keys rotate-master`, run in process against the store a server wrote, on SQLite and on PostgreSQL
 * (MNEMO_DATABASE_URL, the `pg` driver against PGlite on loopback): afterwards the server starts with the new key
 * alone, every secret reads, and webhooks are still signed with their secrets. First with MNEMO_MASTER_KEY (new key
 * first, old second), then with the data directory's master.key, which the command rewrites itself.
 */
describe.each(['sqlite', 'postgres'] as const)('mnemo keys rotate-master on %s', (store) => {
  let pglite: PGlite | undefined;
  let database: FileDatabase | undefined;
  let server: SharedPglite | undefined;
  let receiver: Receiver;
  let dir: string;
  /** What every start and every CLI run of this store shares. */
  let base: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mnemo-rotate-'));
    receiver = await startReceiver();
    base = { MNEMO_DATA_DIR: dir, MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_SQLITE_SYNCHRONOUS: 'normal' };
    if (store === 'postgres') {
      database = await fileDatabase();
      pglite = database.pglite;
      server = await servePglite(pglite);
      base.MNEMO_DATABASE_URL = server.url;
      base.MNEMO_DATABASE_POOL_SIZE = '2';
    }
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await server?.stop();
    await database?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server on exactly the store the CLI opens (the test store switch is not in the way). */
  async function start(env: Record<string, string>): Promise<TestApp> {
    const storage = await createStorage(loadConfig(env));
    try {
      return await createTestApp({ env, overrides: { storage } });
    } catch (err) {
      await storage.close();
      throw err;
    }
  }

  /** What the first test created; the tests of one store run in order, each going on from the last. */
  const state = { key: '', g9Secret: '', g10Secret: '', replayed: '' };
  /** An API key made with an Idempotency-Key: its answer (holding the key) is kept sealed for replays. */
  const makeKeyOnce = (t: TestApp) => t.app.inject({
    method: 'POST', url: '/v1/security/api-keys', headers: { authorization: `Bearer ${state.key}`, 'idempotency-key': 'rotation-1' },
    payload: { name: 'made once' },
  });

  /** Every version of every secret reads, and a G9 and a G10 delivery are signed with the secrets shown at creation. */
  async function expectEverythingWorks(t: TestApp): Promise<void> {
    const s = g11(t.app, state.key);
    for (const name of NAMES) {
      expect(json(await s.get(name)).value).toBe(`${name}/2`);
      expect(json(await s.get(name, 'version=1')).value).toBe(`${name}/1`);
    }
    receiver.received.length = 0;
    const memory = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': state.key }, payload: { title: 'After', content: 'the rotation' } });
    expect(memory.statusCode, memory.body).toBe(201);
    const event = await t.app.inject({ method: 'POST', url: '/v1/events', headers: { 'x-api-key': state.key }, payload: { type: 'wallet.created', data: { n: 1 } } });
    expect(event.statusCode, event.body).toBe(201);
    for (let i = 0; i < 5 && receiver.received.length < 2; i++) await t.container.deliveries.tick();
    const g9 = receiver.received.find((r) => r.url === '/g9')!;
    const g10 = receiver.received.find((r) => r.url === '/g10')!;
    expect(verifyMemoryEventSignature({ payload: g9.body, signature: g9.headers['x-service-signature'], secret: state.g9Secret })).toBe(true);
    expect(verifyMnemoSignature({ payload: g10.body, header: g10.headers['x-service-signature']!, secret: state.g10Secret, now: new Date() })).toBe(true);
    const replay = await makeKeyOnce(t);
    expect([replay.statusCode, replay.headers['idempotent-replayed'], replay.body]).toEqual([201, 'true', state.replayed]);
  }

  /** Every row of every table, as `mnemo migrate` reads them. */
  async function dump(t: TestApp): Promise<string> {
    const rows: string[] = [];
    for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
    return rows.join('\n');
  }

  it('with MNEMO_MASTER_KEY listing the new key first: re-wraps everything; the new key alone then serves it all', async () => {
    const [keyA, keyB] = [newKey(), newKey()];
    const first = await start({ ...base, MNEMO_MASTER_KEY: keyA });
    try {
      state.key = await first.key();
      const s = g11(first.app, state.key);
      for (const name of NAMES) {
        expect((await s.create({ name, value: `${name}/1` })).statusCode).toBe(201);
        expect((await s.update(name, { value: `${name}/2` })).statusCode).toBe(200);
      }
      const g9 = await first.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${state.key}` }, payload: { url: `${receiver.url}/g9`, events: ['memory.created'], secret: 'my-own-g9-signing-secret' } });
      expect(g9.statusCode, g9.body).toBe(201);
      const g10 = await first.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': state.key }, payload: { url: `${receiver.url}/g10`, events: ['wallet.created'] } });
      expect(g10.statusCode, g10.body).toBe(201);
      state.g9Secret = json(g9).data.secret as string;
      state.g10Secret = json(g10).data.secret as string;
      const once = await makeKeyOnce(first);
      expect(once.statusCode, once.body).toBe(201);
      state.replayed = once.body;
      // No row holds a webhook secret in plaintext.
      const rows = await dump(first);
      for (const secret of [state.g9Secret, state.g10Secret, json(once).key as string]) expect(rows.includes(secret), secret).toBe(false);
      await expectEverythingWorks(first);
    } finally {
      await first.close();
    }

    const rotating = { ...base, MNEMO_MASTER_KEY: `${keyB},${keyA}` };
    const run = await mnemo(rotating, 'keys', 'rotate-master', '--page-size', '5');
    expect(run.error).toBeUndefined();
    expect(run.stderr).toContain(`re-wrapping under the first, ${idOf(keyB)}`);
    expect(run.stderr).toMatch(/rotate-master secret versions: 5 checked, 5 re-wrapped\n[\s\S]*rotate-master secret versions: 24 checked, 24 re-wrapped\n/);
    expect(run.stderr).not.toContain(keyA);
    expect(run.stdout).toMatch(/^ {2}secret versions {2}24 values, 24 re-wrapped$/m);
    expect(run.stdout).toMatch(/^ {2}webhook secrets {2}2 values, 2 re-wrapped$/m);
    expect(run.stdout).toMatch(/^ {2}request replays {2}1 values, 1 re-wrapped$/m);
    expect(run.stdout).toMatch(/^ {2}audit chain heads: 1, 1 re-signed$/m);
    expect(run.stdout).toContain(`Retired keys (no server needs them any more): ${idOf(keyA)}\n`);
    expect(run.stdout).toContain(`Remove the other keys from MNEMO_MASTER_KEY on every node (keep ${idOf(keyB)})`);
    // Run again: nothing left to do.
    const again = await mnemo(rotating, 'keys', 'rotate-master');
    expect(again.error).toBeUndefined();
    expect(again.stdout).toMatch(/24 values, 0 re-wrapped[\s\S]*2 values, 0 re-wrapped[\s\S]*Retired keys \(no server needs them any more\): none/);

    // The old key alone no longer fits the store; the new one alone serves everything.
    await expect(start({ ...base, MNEMO_MASTER_KEY: keyA })).rejects.toThrow(new RegExp(`sealed with master key ${idOf(keyB)}`));
    const after = await start({ ...base, MNEMO_MASTER_KEY: keyB });
    try {
      await expectEverythingWorks(after);
      expect(await after.container.storage.secrets.keyCheckIds()).toEqual([idOf(keyB)]);
    } finally {
      await after.close();
    }
    // The audit chain's head was re-signed: the new key alone verifies it, with the rows written since.
    expect((await mnemo({ ...base, MNEMO_MASTER_KEY: keyB }, 'audit', 'verify')).error).toBeUndefined();
    // The next test goes on from here, with master.key instead of MNEMO_MASTER_KEY.
    writeFileSync(join(dir, 'master.key'), `${keyB}\n`, { mode: 0o600 });
  });

  it('with the data directory\'s master.key: makes a new key, re-wraps, and leaves the file holding only it; an interrupted run is finished', async () => {
    // The store as the previous test left it, served from master.key (holding key B) from now on.
    const keyB = readFileSync(join(dir, 'master.key'), 'utf8').trim();
    const run = await mnemo(base, 'keys', 'rotate-master');
    expect(run.error).toBeUndefined();
    const keyC = readFileSync(join(dir, 'master.key'), 'utf8').trim();
    expect(keyC).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(keyC).not.toBe(keyB);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(run.stderr).toContain(`new master key ${idOf(keyC)} written first in ${join(dir, 'master.key')}`);
    expect(run.stderr).not.toContain(keyC);
    expect(run.stdout).toMatch(/24 values, 24 re-wrapped[\s\S]*2 values, 2 re-wrapped/);
    expect(run.stdout).toContain(`Retired keys (no server needs them any more): ${idOf(keyB)}\n`);
    expect(run.stdout).toContain(`now holds only ${idOf(keyC)}`);

    const after = await start(base);
    try {
      await expectEverythingWorks(after);
    } finally {
      await after.close();
    }

    // Interrupted after the new key was written first (the file holds two keys): running again finishes it.
    const keyD = newKey();
    writeFileSync(join(dir, 'master.key'), `${keyD}\n${keyC}\n`, { mode: 0o600 });
    const resumed = await mnemo(base, 'keys', 'rotate-master');
    expect(resumed.error).toBeUndefined();
    expect(resumed.stderr).toContain(`holds 2 keys: finishing the rotation to its first, ${idOf(keyD)}`);
    expect(readFileSync(join(dir, 'master.key'), 'utf8')).toBe(`${keyD}\n`);
    const last = await start(base);
    try {
      await expectEverythingWorks(last);
    } finally {
      await last.close();
    }
  });

  it('refuses a keyring the store was not written with, and a data directory without key or database, changing nothing', async () => {
    const wrong = await mnemo({ ...base, MNEMO_MASTER_KEY: `${newKey()},${newKey()}` }, 'keys', 'rotate-master');
    expect(wrong.error).toBeInstanceOf(CliError);
    expect((wrong.error as Error).message).toMatch(/the store holds secrets sealed with master key mk_[0-9a-f]{16}, which this server's keyring/);
    const current = readFileSync(join(dir, 'master.key'), 'utf8');
    const still = await start(base);
    try {
      await expectEverythingWorks(still);
      expect(await still.container.storage.secrets.keyCheckIds()).toEqual([...keyringFromEnv(current.trim()).keys.keys()]);
    } finally {
      await still.close();
    }
    if (store === 'sqlite') {
      const empty = mkdtempSync(join(tmpdir(), 'mnemo-rotate-empty-'));
      try {
        const none = await mnemo({ MNEMO_DATA_DIR: empty }, 'keys', 'rotate-master');
        expect((none.error as Error).message).toMatch(/^no database at /);
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    }
  });
});

describe('mnemo keys rotate-master --help', () => {
  it('explains both ways and the order of steps', async () => {
    const { stdout, error } = await mnemo({}, 'keys', 'rotate-master', '--help');
    expect((error as CommanderError).exitCode).toBe(0);
    expect(stdout).toContain('Usage: mnemo keys rotate-master');
    expect(stdout).toContain('--page-size');
    expect(stdout).toMatch(/new key first and the old one second/);
    expect(stdout).toMatch(/stop the servers of this data directory first/);
  });
});
