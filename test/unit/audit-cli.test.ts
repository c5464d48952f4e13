import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { keyringFromFile } from '../../src/adapters/secrets/master-keyring.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { CliError } from '../../src/app/cli.ts';
import { createAuditHeadSigner } from '../../src/core/audit/audit.head.ts';
import { createAuditService } from '../../src/core/audit/audit.service.ts';
import type { AuditOwner } from '../../src/core/audit/audit.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { mnemo } from '../support/cli.ts';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A data directory whose store holds `rows` audit rows per owner, written as the server writes them. */
async function dataDirWith(owners: AuditOwner[], rows: number): Promise<{ dir: string; ids: Map<string, string[]> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-audit-cli-'));
  dirs.push(dir);
  const storage = createSqliteStorage({ file: join(dir, 'mnemo.db') });
  // Heads signed with the data directory's master.key (created here), as the server of that directory signs them.
  const heads = createAuditHeadSigner(keyringFromFile(dir).keyring);
  const audit = createAuditService({ audit: storage.audit, clock: new ManualClock(Date.UTC(2026, 5, 1)), heads });
  const ids = new Map<string, string[]>();
  for (const owner of owners) {
    for (let i = 0; i < rows; i++) {
      const row = await audit.record({
        owner, actor: { userId: 'u1', keyId: 'key_1' }, action: 'secret.read', resource: `secret:s${i}`, outcome: 'success', status: 200,
      });
      ids.set(`${owner.tenantId}/${owner.mode}`, [...(ids.get(`${owner.tenantId}/${owner.mode}`) ?? []), row.id]);
    }
  }
  await storage.close();
  return { dir, ids };
}

/** What someone holding the database file (but not master.key) could do: lift the append-only triggers and change rows. */
function tamper(dir: string, ...statements: [string, ...unknown[]][]): void {
  const db = new Database(join(dir, 'mnemo.db'));
  db.exec('DROP TRIGGER IF EXISTS audit_logs_no_update; DROP TRIGGER IF EXISTS audit_logs_no_delete');
  for (const [sql, ...params] of statements) db.prepare(sql).run(...params);
  db.close();
}

describe('mnemo audit verify', () => {
  const acme: AuditOwner = { tenantId: 'acme', mode: 'live' };
  const sandbox: AuditOwner = { tenantId: 'acme', mode: 'test' };

  it('has help', async () => {
    for (const args of [['audit', '--help'], ['audit', 'verify', '--help'], ['audit', 'head', '--help']]) {
      const { stdout, error } = await mnemo({}, ...args);
      expect(stdout, args.join(' ')).toContain('Usage: mnemo audit');
      expect((error as CommanderError).exitCode).toBe(0);
    }
    const verifyHelp = (await mnemo({}, 'audit', 'verify', '--help')).stdout.replace(/\s+/g, ' ');
    expect(verifyHelp).toContain('exit 1 naming the first broken row');
    expect(verifyHelp).toContain('rows cut from the end or appended, a chain rewritten or deleted, a head missing or forged');
    expect(verifyHelp).toContain('--since-head <file>');
    expect((await mnemo({}, 'audit', 'head', '--help')).stdout).toContain('mnemo audit head >> ');
  });

  it('exits 0 with a summary and each chain\'s head when every chain holds', async () => {
    const { dir } = await dataDirWith([acme, sandbox], 3);
    const { stdout, stderr, error } = await mnemo({ MNEMO_DATA_DIR: dir }, 'audit', 'verify');
    expect(error).toBeUndefined();
    expect(stderr).toBe(`mnemo: database ${join(dir, 'mnemo.db')}\n`);
    expect(stdout).toMatch(/^audit log intact: 6 rows in 2 chains\n {2}acme\/live {2}3 rows {2}head 3 [0-9a-f]{64}\n {2}acme\/test {2}3 rows {2}head 3 [0-9a-f]{64}\n$/);

    const asJson = await mnemo({ MNEMO_DATA_DIR: dir }, 'audit', 'verify', '--json', '--page-size', '2');
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ok: true, rows: 6, broken: [], intact: [{ owner: acme, rows: 3, headSeq: 3 }, { owner: sandbox }] });
  });

  it('exits 1 naming the first broken row of each chain: an edited row, a deleted row', async () => {
    const { dir, ids } = await dataDirWith([acme, sandbox], 4);
    const live = ids.get('acme/live')!;
    const test = ids.get('acme/test')!;
    tamper(dir, ['UPDATE audit_logs SET resource = ? WHERE id = ?', 'secret:innocent', live[1]], ['DELETE FROM audit_logs WHERE id = ?', test[0]]);
    const { stdout, error } = await mnemo({ MNEMO_DATA_DIR: dir }, 'audit', 'verify');
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toBe(`audit chain acme/live is broken at row 2 (${live[1]}) and 1 more chain(s)`);
    expect(stdout).toContain('audit log BROKEN: 2 of 2 chains (7 rows)');
    expect(stdout).toContain(`acme/live  broken at row 2 (${live[1]}): hash_mismatch: row 2 (${live[1]}) was edited`);
    expect(stdout).toContain(`acme/test  broken at row 2 (${test[1]}): missing_rows: row 1 is missing before row 2`);

    const asJson = await mnemo({ MNEMO_DATA_DIR: dir }, 'audit', 'verify', '--json');
    expect(asJson.error).toBeInstanceOf(CliError);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ok: false, broken: [{ seq: 2, reason: 'hash_mismatch' }, { seq: 2, reason: 'missing_rows' }] });
  });

  it('prints the signed heads to keep; finds rows cut from the end, and with the kept heads a chain deleted with its head', async () => {
    const { dir, ids } = await dataDirWith([acme, sandbox], 4);
    const env = { MNEMO_DATA_DIR: dir };
    const printed = await mnemo(env, 'audit', 'head');
    expect(printed.error).toBeUndefined();
    const line = JSON.parse(printed.stdout) as { format: string; at: string; heads: Record<string, unknown>[] };
    expect(line).toMatchObject({ format: 'mnemo-audit-heads-v1', at: expect.any(String) });
    expect(line.heads).toEqual([acme, sandbox].map((o) => ({
      tenant: o.tenantId, mode: o.mode, seq: 4, hash: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: expect.stringMatching(/^mk_/),
      signedAt: '2026-06-01T00:00:00.000Z', mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    })));
    // Kept elsewhere, a line a run, as a cron job would append them.
    const kept = join(dir, 'kept-heads.jsonl');
    writeFileSync(kept, printed.stdout);
    appendFileSync(kept, (await mnemo(env, 'audit', 'head')).stdout);
    expect((await mnemo(env, 'audit', 'verify', '--since-head', kept)).stdout).toMatch(/^audit log intact: 8 rows in 2 chains, 4 kept heads checked\n/);

    const live = ids.get('acme/live')!;
    tamper(dir, ['DELETE FROM audit_logs WHERE id IN (?, ?)', live[2], live[3]]);
    const cut = await mnemo(env, 'audit', 'verify');
    expect((cut.error as Error).message).toBe(`audit chain acme/live: truncated: its signed head is row 4 but the chain ends at row 2 (${live[1]}): rows 3-4 were cut from its end`);
    expect(cut.stdout).toContain('audit log BROKEN: 1 of 2 chains (6 rows)\n  acme/live  truncated: its signed head is row 4');

    // The sandbox chain deleted with its head row: the database alone shows nothing, the kept heads do.
    tamper(dir, ['DELETE FROM audit_logs WHERE tenant_id = ? AND mode = ?', 'acme', 'test'], ['DELETE FROM audit_heads WHERE tenant_id = ? AND mode = ?', 'acme', 'test']);
    expect(JSON.parse((await mnemo(env, 'audit', 'verify', '--json')).stdout)).toMatchObject({ broken: [{ owner: acme, reason: 'truncated' }] });
    const against = await mnemo(env, 'audit', 'verify', '--json', '--since-head', kept);
    expect(against.error).toBeInstanceOf(CliError);
    expect(JSON.parse(against.stdout)).toMatchObject({
      ok: false, intact: [], broken: [{ owner: acme, seq: 2, reason: 'truncated', head: { seq: 4 } }, { owner: sandbox, seq: 0, id: null, reason: 'chain_missing' }],
    });

    // Another master key than the one that signed: no head verifies, and `audit head` leaves them all out.
    const other = { ...env, MNEMO_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') };
    expect(JSON.parse((await mnemo(other, 'audit', 'verify', '--json')).stdout)).toMatchObject({ broken: [{ reason: 'head_forged' }] });
    const unverified = await mnemo(other, 'audit', 'head');
    expect(JSON.parse(unverified.stdout)).toMatchObject({ heads: [] });
    expect(unverified.stderr).toContain('mnemo: acme/live: its head is signed with mk_');
    expect((unverified.error as Error).message).toBe('1 head(s) left out: run `mnemo audit verify`');
    // A file that is not what `audit head` printed is refused, naming its line.
    writeFileSync(kept, `${printed.stdout}{"heads": []}\n`);
    expect(((await mnemo(env, 'audit', 'verify', '--since-head', kept)).error as Error).message).toMatch(/kept-heads\.jsonl:2: no "format"/);
  });

  it('refuses a data directory without a database, and creates none', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'mnemo-audit-cli-')), 'nothing-here');
    dirs.push(missing);
    const { error } = await mnemo({ MNEMO_DATA_DIR: missing }, 'audit', 'verify');
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toContain('no database at');
  });
});
