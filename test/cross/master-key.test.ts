import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, json } from '../support/test-app.ts';
import { npmStart } from '../support/npm-start.ts';
import { testStoreKind } from '../support/test-store.ts';
import { g11 } from '../g11/client.ts';

/**
 * The master key: from MNEMO_MASTER_KEY, or the data directory's master.key (created 0600 on first start). A
 * missing, exposed or wrong key stops the start with a clear message; it never lets the server answer with
 * something it cannot decrypt.
 */
describe('the master key at start-up', () => {
  const dirs: string[] = [];
  const dataDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-master-')); dirs.push(d); return d; };
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('creates master.key (0600) on first start and reads secrets with it after a restart', async () => {
    const dir = dataDir();
    const first = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    const key = await first.key();
    expect((await g11(first.app, key).create({ name: 'kept', value: 'across restarts' })).statusCode).toBe(201);
    await first.close().catch(() => undefined);
    const file = join(dir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const again = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    try {
      expect(json(await g11(again.app, key).get('kept')).value).toBe('across restarts');
    } finally {
      await again.close();
    }
  });

  it('refuses a key file that others may read', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'master.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o644 });
    chmodSync(join(dir, 'master.key'), 0o644);
    await expect(createTestApp({ env: { MNEMO_DATA_DIR: dir } })).rejects.toThrow(/master\.key is readable by others \(mode 0644\): run `chmod 600/);
  });

  it('refuses to start with another key than the store was written with, or with its key file gone', async () => {
    const dir = dataDir();
    const original = randomBytes(32).toString('base64');
    const first = await createTestApp({ env: { MNEMO_DATA_DIR: dir, MNEMO_MASTER_KEY: original } });
    await g11(first.app, await first.key()).create({ name: 's', value: 'v' });
    await first.close();
    await expect(createTestApp({ env: { MNEMO_DATA_DIR: dir, MNEMO_MASTER_KEY: randomBytes(32).toString('base64') } }))
      .rejects.toThrow(/the store holds secrets sealed with master key mk_[0-9a-f]{16}, which this server's keyring \(mk_[0-9a-f]{16}\) does not have/);
    // Without MNEMO_MASTER_KEY a new key file would be made: refused the same way.
    await expect(createTestApp({ env: { MNEMO_DATA_DIR: dir } })).rejects.toThrow(/does not have/);
    unlinkSync(join(dir, 'master.key'));
    // The right key, listed second behind a new one, still opens the store (the first rotation step).
    const rotating = await createTestApp({ env: { MNEMO_DATA_DIR: dir, MNEMO_MASTER_KEY: `${randomBytes(32).toString('hex')},${original}` } });
    try {
      expect(json(await g11(rotating.app, await rotating.key()).get('s')).value).toBe('v');
    } finally {
      await rotating.close();
    }
  });

  // A process of its own that stops on the key before it opens any store (what MNEMO_TEST_STORE names does not reach
  // it): the same in the `postgres` project, so it runs in `suite` only.
  it.runIf(testStoreKind() === 'sqlite')('`npm start` with a malformed MNEMO_MASTER_KEY exits 1 with a message that does not echo the key', async () => {
    const bad = 'not-a-key-but-a-secret-looking-string';
    const started = npmStart({ MNEMO_DATA_DIR: dataDir(), MNEMO_EMBEDDINGS: 'hashing', PORT: '0', HOST: '127.0.0.1', MNEMO_MASTER_KEY: bad });
    const error = await started.then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/server exited \(1\) before listening:[\s\S]*mnemo: failed to start: MNEMO_MASTER_KEY: key 1 is not 32 bytes/);
    expect(error?.message).not.toContain(bad);
  });
});
