import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf } from '../../src/app/openapi.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

interface LintReport { totals: { errors: number; warnings: number }; problems: { ruleId: string; severity: string; location: { pointer: string }[] }[] }

describe('the OpenAPI document at /openapi.json', () => {
  let t: TestApp;
  let doc: Json;
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-openapi-'));
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const operations = () => Object.entries(doc.paths as Record<string, Record<string, Json>>)
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

  it('passes `redocly lint` (recommended rules) with no error', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const { stdout } = await run(join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json'], {
      cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    const report = JSON.parse(stdout) as LintReport;
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it('names every operation with a unique operationId', () => {
    const ids = operations().map(({ op }) => op.operationId as string);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationIdOf('POST', '/api/v1/memories/:id')).toBe('postApiV1MemoriesById');
    expect(operationIdOf('GET', '/v1/search/vector')).toBe('getV1SearchVector');
    expect(operationIdOf('DELETE', '/api/v1/webhooks/:webhook_id')).toBe('deleteApiV1WebhooksByWebhookId');
  });

  it("lists the 4xx answers of every surface's operations, and has no path with a trailing slash", () => {
    for (const { path, method, op } of operations()) {
      expect(path === '/' || !path.endsWith('/'), path).toBe(true);
      if (path.endsWith('/health')) continue;
      expect(Object.keys(op.responses as object).some((code) => code.startsWith('4')), `${method} ${path}`).toBe(true);
    }
  });

  it('describes the SSE and WebSocket endpoints', () => {
    for (const path of ['/api/v1/stream', '/v1/search/stream']) {
      expect(doc.paths[path].get.responses['200'].content['text/event-stream'], path).toBeDefined();
    }
    for (const path of ['/v1/search/live', '/api/v1/analytics/stream']) {
      const op = doc.paths[path].get;
      expect(op.responses['101'], path).toBeDefined();
      expect(op.description, path).toMatch(/WebSocket/);
    }
  });
});
