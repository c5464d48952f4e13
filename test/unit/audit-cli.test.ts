import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { CliError } from '../../src/app/cli.ts';
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
  const audit = createAuditService({ audit: storage.audit, clock: new ManualClock(Date.UTC(2026, 5, 1)) });
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

/** What someone holding the database file could do: lift the append-only triggers and change a row. */
function tamper(dir: string, ...statements: [string, ...unknown[]][]): void {
  const db = new Database(join(dir, 'mnemo.db'));
  db.exec('DROP TRIGGER audit_logs_no_update; DROP TRIGGER audit_logs_no_delete');
  for (const [sql, ...params] of statements) db.prepare(sql).run(...params);
  db.close();
}

describe('mnemo audit verify', () => {
  const acme: AuditOwner = { tenantId: 'acme', mode: 'live' };
  const sandbox: AuditOwner = { tenantId: 'acme', mode: 'test' };

  it('has help', async () => {
    for (const args of [['audit', '--help'], ['audit', 'verify', '--help']]) {
      const { stdout, error } = await mnemo({}, ...args);
      expect(stdout, args.join(' ')).toContain('Usage: mnemo audit');
      expect((error as CommanderError).exitCode).toBe(0);
    }
    expect((await mnemo({}, 'audit', 'verify', '--help')).stdout).toContain('exit 1 naming the first broken row');
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

  it('refuses a data directory without a database, and creates none', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'mnemo-audit-cli-')), 'nothing-here');
    dirs.push(missing);
    const { error } = await mnemo({ MNEMO_DATA_DIR: missing }, 'audit', 'verify');
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toContain('no database at');
  });
});
