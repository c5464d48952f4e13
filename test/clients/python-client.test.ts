import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS } from '../../src/core/api-keys/api-key.types.ts';
import { finished } from '../support/spawn-cli.ts';
import { createTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';

/**
 * The Python client (clients/python) against a real Mnemo server on loopback: its own unittest suite, run by
 * Debian's python3, with the keys it needs. Webhook deliveries are real (the delivery worker runs and may reach
 * 127.0.0.0/8), so the Python tests verify signatures Mnemo itself made.
 */
const clientDir = fileURLToPath(new URL('../../clients/python', import.meta.url));
// Debian's interpreter when there is one (what the client targets); else whichever python3 the PATH names.
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const hasPython = spawnSync(python, ['--version']).status === 0;

describe.skipIf(!hasPython)('Python client against a real server', () => {
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' } });
    // Every scope, memories:forget included, so the suite can forget by filter; user-2 answers user-1's approvals.
    const key = await t.freshTenant({ user: 'user-1', scopes: [...ALL_PERMISSIONS] });
    const approverKey = await t.key({ user: 'user-2' });
    const otherTenantKey = await t.key({ tenant: uniqueTenant('python-other') });
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.container.deliveries.start();
    env = {
      MNEMO_URL: url, MNEMO_KEY: key, MNEMO_APPROVER_KEY: approverKey, MNEMO_APPROVER_USER: 'user-2', MNEMO_OTHER_TENANT_KEY: otherTenantKey,
    };
  });
  afterAll(() => t?.close());

  it('passes clients/python/tests (python3 -m unittest)', async () => {
    const child = spawn(python, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      cwd: clientDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PYTHONDONTWRITEBYTECODE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = await finished(child);
    const output = `${run.stdout}${run.stderr}`;
    expect(run.code, output).toBe(0);
    // Every test ran: none skipped for want of a server or a key.
    expect(output, output).toMatch(/^OK$/m);
  }, 60_000);
});

if (!hasPython) {
  describe('Python client against a real server', () => {
    it.skip('needs python3 on the PATH (Debian: apt-get install python3)', () => {});
  });
}
