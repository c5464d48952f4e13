import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMnemo } from '../support/spawn-cli.ts';
import { createTestApp, g1 } from '../support/test-app.ts';

/**
 * A command that fails for an operational reason (the embeddings provider refuses the key) says why in one line and
 * exits 1, as an operator expects; a stack trace is for bugs. Spawned, as `mnemo` runs.
 */
const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('mnemo: operational failures', () => {
  it('reindex against a provider that refuses the key: one line naming the failure, exit 1, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-cli-errors-'));
    dirs.push(dir);
    const app = await createTestApp({ env: { MNEMO_DATA_DIR: dir } });
    try {
      const key = await app.key();
      expect((await g1(app.app, key).create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays' })).statusCode).toBe(201);
    } finally {
      await app.close();
    }
    // An OpenAI-compatible provider on loopback that answers 401, as one does for a wrong API key (not retried).
    const provider: Server = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Incorrect API key provided"}}');
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
      const run = await runMnemo({
        MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_URL: url, MNEMO_EMBEDDINGS_MODEL: 'test-model',
        MNEMO_EMBEDDINGS_DIMENSIONS: '32',
      }, 'reindex');
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/^mnemo: embedding request failed: HTTP 401 .*Incorrect API key provided/m);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise<void>((resolve) => provider.close(() => resolve()));
    }
  });
});
