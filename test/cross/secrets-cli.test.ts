import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/app/cli.ts';
import { mnemo } from '../support/cli.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { g11 } from '../g11/client.ts';

/** `mnemo secrets get|set|list` on the server's store, with the server's master key (the data directory's master.key). */
describe('mnemo secrets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-secrets-cli-'));
  const env = { MNEMO_DATA_DIR: dir };
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await createTestApp({ env });
    key = await t.key({ tenant: 'cli-tenant' });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads what the server wrote, and the server reads what it writes', async () => {
    await g11(t.app, key).create({ name: 'from-http', value: 'written over HTTP', tags: ['ops'] });
    const got = await mnemo(env, 'secrets', 'get', 'from-http', '--tenant', 'cli-tenant');
    expect(got.error).toBeUndefined();
    expect(got.stdout).toBe('written over HTTP\n');

    const file = join(dir, 'value.txt');
    writeFileSync(file, 'line one\nline two\n');
    const set = await mnemo(env, 'secrets', 'set', 'from-cli', '--tenant', 'cli-tenant', '--from-file', file, '--tags', 'ops,db', '--expires-in', '30d');
    expect(set.error).toBeUndefined();
    expect(set.stdout).toMatch(/^from-cli: version 1, expires \d{4}-/);
    expect(json(await g11(t.app, key).get('from-cli'))).toMatchObject({ value: 'line one\nline two\n', tags: ['ops', 'db'], version: 1 });

    // set on an existing name writes the next version.
    expect((await mnemo(env, 'secrets', 'set', 'from-http', '--tenant', 'cli-tenant', '--value', 'rotated by the operator')).stdout).toBe('from-http: version 2\n');
    expect(json(await g11(t.app, key).get('from-http'))).toMatchObject({ value: 'rotated by the operator', version: 2, tags: ['ops'] });
    expect((await mnemo(env, 'secrets', 'get', 'from-http', '--tenant', 'cli-tenant', '--version', '1')).stdout).toBe('written over HTTP\n');

    const listed = await mnemo(env, 'secrets', 'list', '--tenant', 'cli-tenant', '--json');
    expect(JSON.parse(listed.stdout).map((s: { name: string; version: number }) => [s.name, s.version])).toEqual([['from-cli', 1], ['from-http', 2]]);
    expect(listed.stdout).not.toContain('rotated by the operator');
    // Another tenant, or the sandbox, sees none of them.
    expect(JSON.parse((await mnemo(env, 'secrets', 'list', '--tenant', 'cli-tenant', '--mode', 'test', '--json')).stdout)).toEqual([]);
  });

  it('announces what it does as the server would: secret.created on a new secret, secret.accessed (via cli) on a read', async () => {
    const since = await t.container.storage.events.latestSeq();
    expect((await mnemo(env, 'secrets', 'set', 'announced', '--tenant', 'cli-tenant', '--value', 'CLI_MARKER_VALUE', '--user', 'ops')).error).toBeUndefined();
    expect((await mnemo(env, 'secrets', 'get', 'announced', '--tenant', 'cli-tenant', '--user', 'alice')).stdout).toBe('CLI_MARKER_VALUE\n');
    const events = await t.container.storage.events.readAfter({ tenantId: 'cli-tenant', mode: 'live', workspace: null, afterSeq: since, limit: 10 });
    expect(events.map((e) => [e.type, e.scope.workspace, e.data.name])).toEqual([['secret.created', null, 'announced'], ['secret.accessed', null, 'announced']]);
    expect(events[0]!.data).toMatchObject({ createdBy: 'ops', version: 1 });
    expect(events[1]!.data).toMatchObject({ accessedBy: 'alice', accessedVia: 'cli', version: 1 });
    expect(JSON.stringify(events)).not.toContain('CLI_MARKER_VALUE');
  });

  it('says what is wrong in one line: unknown secret, bad name, both or neither value options', async () => {
    const missing = await mnemo(env, 'secrets', 'get', 'nope', '--tenant', 'cli-tenant');
    expect(missing.error).toBeInstanceOf(CliError);
    expect((missing.error as Error).message).toBe('Secret "nope" not found');
    expect((await mnemo(env, 'secrets', 'get', 'bad/name')).stderr).toMatch(/must be 1-128 characters/);
    for (const args of [['--value', 'a', '--from-file', '/dev/null'], []]) {
      const r = await mnemo(env, 'secrets', 'set', 'x', ...args);
      expect((r.error as Error).message).toBe('give the value with exactly one of --value or --from-file');
    }
    expect((await mnemo(env, 'secrets', 'set', 'x', '--value', 'v', '--expires-in', 'forever')).stderr).toMatch(/whole number followed by/);
  });

  it('has --help on each command', async () => {
    for (const cmd of ['get', 'set', 'list']) {
      const help = await mnemo(env, 'secrets', cmd, '--help');
      expect(help.stdout).toMatch(new RegExp(`Usage: mnemo secrets ${cmd}`));
    }
  });
});
