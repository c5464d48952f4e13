import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/app/cli.ts';
import { mnemo } from '../support/cli.ts';

const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-cli-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('mnemo command line (in process)', () => {
  it('prints help for every command', async () => {
    for (const args of [['--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'list', '--help'], ['keys', 'revoke', '--help'], ['keys', 'rotate-master', '--help'], ['serve', '--help'], ['migrate', '--help']]) {
      const { stdout, error } = await mnemo({}, ...args);
      expect(stdout, args.join(' ')).toContain('Usage: mnemo');
      expect(error).toBeInstanceOf(CommanderError);
      expect((error as CommanderError).exitCode).toBe(0);
    }
  });

  it('creates a key as one JSON line and says on stderr which database it used', async () => {
    const dataDir = tempDir();
    const { stdout, stderr, error } = await mnemo({ MNEMO_DATA_DIR: dataDir }, 'keys', 'create', '--tenant', 'cli', '--tier', 'pro', '--json');
    expect(error).toBeUndefined();
    const created = JSON.parse(stdout) as Record<string, unknown>;
    expect(created).toMatchObject({ tenant: 'cli', user: 'admin', tier: 'pro', mode: 'live' });
    expect(stderr).toBe(`mnemo: database ${join(dataDir, 'mnemo.db')}\n`);

    const listed = await mnemo({ MNEMO_DATA_DIR: dataDir }, 'keys', 'list', '--json');
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id)).toEqual([created.id]);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ name: 'API key', expires_at: null, revoked_at: null, replaced_by: null });
    expect(listed.stderr).toContain(join(dataDir, 'mnemo.db'));

    const revoked = await mnemo({ MNEMO_DATA_DIR: dataDir }, 'keys', 'revoke', created.id as string);
    expect(revoked.stdout).toBe(`revoked ${created.id as string}\n`);
    const again = await mnemo({ MNEMO_DATA_DIR: dataDir }, 'keys', 'revoke', created.id as string);
    expect(again.error).toBeInstanceOf(CliError);
  });

  it('names a key with --name (1-100 characters, not blank)', async () => {
    const env = { MNEMO_DATA_DIR: tempDir() };
    const named = await mnemo(env, 'keys', 'create', '--name', 'Nightly backup job', '--json');
    expect(named.error).toBeUndefined();
    const listed = await mnemo(env, 'keys', 'list');
    expect(listed.stdout).toContain('"Nightly backup job"');
    for (const bad of ['   ', 'x'.repeat(101)]) {
      const refused = await mnemo(env, 'keys', 'create', '--name', bad, '--json');
      expect(refused.error).toBeInstanceOf(CommanderError);
      expect(refused.stderr).toContain('the name must be 1-100 characters');
    }
  });

  it('refuses to list or revoke keys of a database that does not exist, and creates none', async () => {
    const missing = join(tempDir(), 'not-the-server-dir');
    for (const args of [['keys', 'list'], ['keys', 'revoke', 'key_x']]) {
      const { error, stdout } = await mnemo({ MNEMO_DATA_DIR: missing }, ...args);
      expect(error).toBeInstanceOf(CliError);
      expect((error as Error).message).toContain(join(missing, 'mnemo.db'));
      expect((error as Error).message).toContain('MNEMO_DATA_DIR');
      expect(stdout).toBe('');
    }
    expect(existsSync(missing)).toBe(false);
  });

  it('rejects unknown tiers and scopes, and accepts test mode with chosen scopes', async () => {
    const env = { MNEMO_DATA_DIR: tempDir() };
    const tier = await mnemo(env, 'keys', 'create', '--tier', 'platinum', '--json');
    expect(tier.error).toBeInstanceOf(CommanderError);
    expect(tier.stderr).toContain('platinum');
    const scopes = await mnemo(env, 'keys', 'create', '--scopes', 'memories:read,root', '--json');
    expect(scopes.stderr).toContain('root');
    const test = await mnemo(env, 'keys', 'create', '--scopes', 'memories:read', '--mode', 'test', '--json');
    const key = JSON.parse(test.stdout) as Record<string, unknown>;
    expect(key).toMatchObject({ tier: 'free', mode: 'test', scopes: ['memories:read'], tenant: 'default' });
    expect(key.key).toMatch(/^mnemo_test_/);
  });
});
