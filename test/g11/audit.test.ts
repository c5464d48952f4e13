import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { createTestApp, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { openTestPostgresStorage, testStoreKind } from '../support/test-store.ts';
import { g11, g11Audit, g11Keys, ISO } from './client.ts';
import { requireAuditedRoutes } from '../../src/surfaces/g11-security/audit-recorder.ts';

const HASH = /^[0-9a-f]{64}$/;
const AUDIT_ID = /^aud_[A-Za-z0-9]{24}$/;
const auditTable = TRANSFER_TABLES.find((t) => t.name === 'audit_logs')!;

/** Every audit row of the store, as `mnemo migrate` would copy it. */
const dumpAudit = async (t: TestApp) => t.container.storage.transfer.dump(auditTable, null, 1_000_000);

const hasPython = spawnSync('python3', ['--version']).status === 0;
/** Runs a Python 3 program on `input`: a reader that shares no code with Mnemo. */
function python(program: string, input: string): unknown {
  const run = spawnSync('python3', ['-c', program], { input, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as unknown;
}

/** docs/api.md, "Audit logs": the chain checked from a JSON export by an outsider, in Python's standard library. */
const PYTHON_VERIFIER = `
import hashlib, json, sys
rows, prev, out = json.load(sys.stdin), "0" * 64, []
for r in rows:
    meta = json.dumps(r["metadata"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    form = ["mnemo-audit-v1", r["tenantId"], r["mode"], r["seq"], r["id"], r["timestamp"], r["actor"]["userId"],
            r["actor"]["keyId"], r["action"], r["resource"], r["outcome"], r["status"], r["ip"], r["userAgent"],
            r["region"], r["requestId"], meta, r["prevHash"]]
    digest = hashlib.sha256(json.dumps(form, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()
    out.append({"seq": r["seq"], "links": r["prevHash"] == prev, "hashes": digest == r["hash"]})
    prev = r["hash"]
print(json.dumps(out))
`;
const PYTHON_CSV = 'import csv, io, json, sys\nprint(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline="")))))';

describe('G11 audit logs: happy paths', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());
  const keyIdOf = async (key: string) => (await t.container.apiKeys.authenticate(key)).keyId;

  it('records every secret operation, success or failure, before answering; newest first; one by id', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key, { 'user-agent': 'audit-test/1.0' });
    const created = await s.create({ name: 'db-password', value: 'hunter2' }, { 'x-region': 'eu-west-1' });
    expect(created.statusCode).toBe(201);
    clock.advance(1000);
    expect((await s.get('db-password')).statusCode).toBe(200);
    expect((await s.update('db-password', { value: 'hunter3' })).statusCode).toBe(200);
    expect((await s.list()).statusCode).toBe(200);
    expect((await s.get('missing')).statusCode).toBe(404);
    expect((await s.create({ name: 'db-password', value: 'again' })).statusCode).toBe(409);
    expect((await s.delete('db-password')).statusCode).toBe(204);

    const a = g11Audit(t.app, key);
    const listed = await a.list();
    expect(listed.statusCode, listed.body).toBe(200);
    const body = json(listed);
    expect(body.data.map((r: Json) => [r.seq, r.action, r.resource, r.outcome, r.status])).toEqual([
      [7, 'secret.delete', 'secret:db-password', 'success', 204],
      [6, 'secret.create', 'secret:db-password', 'failure', 409],
      [5, 'secret.read', 'secret:missing', 'failure', 404],
      [4, 'secret.list', 'secret:*', 'success', 200],
      [3, 'secret.update', 'secret:db-password', 'success', 200],
      [2, 'secret.read', 'secret:db-password', 'success', 200],
      [1, 'secret.create', 'secret:db-password', 'success', 201],
    ]);
    expect(body.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 7 });

    const first = body.data[6];
    expect(first).toEqual({
      id: expect.stringMatching(AUDIT_ID), seq: 1, tenantId: t.tenant, mode: 'live', timestamp: '2026-06-01T12:00:00.000Z',
      actor: { userId: 'user-1', keyId: await keyIdOf(key) }, action: 'secret.create', resource: 'secret:db-password',
      outcome: 'success', status: 201, ip: '127.0.0.1', userAgent: 'audit-test/1.0', region: 'eu-west-1',
      requestId: created.headers['x-request-id'], metadata: { version: 1 }, prevHash: '0'.repeat(64), hash: expect.stringMatching(HASH),
    });
    expect(body.data[5]).toMatchObject({ timestamp: '2026-06-01T12:00:01.000Z', metadata: { version: 1 }, prevHash: first.hash, region: null });
    expect(body.data[4].metadata).toEqual({ version: 2 });
    expect(body.data[3].metadata).toEqual({ returned: 1 });

    const one = await a.get(first.id);
    expect(one.statusCode).toBe(200);
    expect(json(one)).toEqual(first);
    // Reading the log is recorded too, after the answer it describes was computed.
    const again = json(await a.list('limit=3'));
    expect(again.data.map((r: Json) => [r.action, r.resource, r.metadata])).toEqual([
      ['audit.read', `audit-log:${first.id}`, {}], ['audit.read', 'audit-log:*', { returned: 7 }], ['secret.delete', 'secret:db-password', {}],
    ]);
  });

  it('filters by actor (user or key), action (or family), resource and time, a page at a time', async () => {
    const admin = await t.freshTenant({ user: 'alice' });
    const bobKey = await t.key({ user: 'bob' });
    const alice = g11(t.app, admin);
    const bob = g11(t.app, bobKey);
    const start = clock.now().getTime();
    await alice.create({ name: 'one', value: 'v1' });
    clock.advance(60_000);
    await bob.get('one');
    await bob.create({ name: 'two', value: 'v2' });
    clock.advance(60_000);
    await alice.delete('two');
    await bob.list();
    const a = g11Audit(t.app, admin);
    const actions = async (query: string) => {
      const res = await a.list(query);
      expect(res.statusCode, res.body).toBe(200);
      return json(res).data.map((r: Json) => `${r.actor.userId} ${r.action} ${r.resource}`);
    };
    expect(await actions('actor=bob')).toEqual(['bob secret.list secret:*', 'bob secret.create secret:two', 'bob secret.read secret:one']);
    expect(await actions(`actor=${await keyIdOf(bobKey)}&action=secret.create`)).toEqual(['bob secret.create secret:two']);
    expect(await actions('action=secret.*&resource=secret:two')).toEqual(['alice secret.delete secret:two', 'bob secret.create secret:two']);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await actions(`from=${iso(start + 60_000)}&to=${iso(start + 120_000)}&action=secret.*`))
      .toEqual(['bob secret.create secret:two', 'bob secret.read secret:one']);
    expect(await actions('action=audit.*')).toEqual(['alice audit.read audit-log:*', 'alice audit.read audit-log:*', 'alice audit.read audit-log:*', 'alice audit.read audit-log:*']);

    const first = json(await a.list('limit=2&action=secret.*'));
    expect(first.data).toHaveLength(2);
    expect(first.pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 5 });
    const second = json(await a.list(`limit=2&action=secret.*&cursor=${encodeURIComponent(first.pagination.cursor)}`));
    const third = json(await a.list(`limit=2&action=secret.*&cursor=${encodeURIComponent(second.pagination.cursor)}`));
    expect(third.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 5 });
    const seqs = [...first.data, ...second.data, ...third.data].map((r: Json) => r.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => y - x));
    expect(new Set(seqs).size).toBe(5);
  });

  it('filters by region (X-Region of the request), in lists and exports', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'eu', value: 'v' }, { 'x-region': 'eu-west-1' });
    await s.create({ name: 'us', value: 'v' }, { 'x-region': 'us-east-1' });
    await s.get('eu');
    await g11(t.app, key, { 'x-region': 'eu-west-1' }).get('us');
    const a = g11Audit(t.app, key);
    const listed = json(await a.list('region=eu-west-1'));
    expect(listed.data.map((r: Json) => [r.action, r.resource, r.region])).toEqual([
      ['secret.read', 'secret:us', 'eu-west-1'], ['secret.create', 'secret:eu', 'eu-west-1'],
    ]);
    expect(listed.pagination.totalCount).toBe(2);
    const exported = await a.export({ region: 'us-east-1' });
    expect(json(exported).map((r: Json) => r.resource)).toEqual(['secret:us']);
    expect(exported.headers['x-total-count']).toBe('1');
  });

  it('exports the chain as JSON that anyone can check, and as RFC 4180 CSV, in pages', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key, { 'user-agent': 'agent, with "quotes"\r\nand a new line' });
    for (const name of ['alpha', 'beta', 'gamma']) await s.create({ name, value: `value of ${name}` });
    await g11(t.app, key, { 'user-agent': '=HYPERLINK("http://x")' }).get('alpha');
    await s.get('nope');
    const a = g11Audit(t.app, key);

    const exported = await a.export({});
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(exported.headers['content-disposition']).toBe('attachment; filename="audit-logs.json"');
    expect(exported.headers['x-total-count']).toBe('5');
    expect(exported.headers['x-next-cursor']).toBeUndefined();
    const rows = exported.json() as Json[];
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    for (const [i, r] of rows.entries()) expect(r.prevHash).toBe(i === 0 ? '0'.repeat(64) : rows[i - 1]!.hash);
    expect(rows[0]!.userAgent).toBe('agent, with "quotes"\r\nand a new line');
    if (hasPython) {
      expect(python(PYTHON_VERIFIER, exported.body)).toEqual(rows.map((r) => ({ seq: r.seq, links: true, hashes: true })));
    }

    const csv = await a.export({ format: 'csv' });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="audit-logs.csv"');
    const lines = csv.body.split('\r\n');
    expect(lines[0]).toBe('id,seq,tenantId,mode,timestamp,userId,keyId,action,resource,outcome,status,ip,userAgent,region,requestId,metadata,prevHash,hash');
    // The export is recorded after it was taken: the CSV holds the JSON export's row too, and nothing after it.
    const expected = [...rows, json(await a.list('action=audit.export')).data.at(-1)];
    if (hasPython) {
      const parsed = python(PYTHON_CSV, csv.body) as string[][];
      expect(parsed).toHaveLength(7);
      expect(parsed.slice(1).map((cells) => cells[0])).toEqual(expected.map((r) => r.id));
      const [, firstRow] = parsed;
      expect(firstRow).toEqual([
        rows[0]!.id, '1', t.tenant, 'live', rows[0]!.timestamp, 'user-1', rows[0]!.actor.keyId, 'secret.create', 'secret:alpha', 'success',
        '201', '127.0.0.1', 'agent, with "quotes"\r\nand a new line', '', rows[0]!.requestId, '{"version":1}', rows[0]!.prevHash, rows[0]!.hash,
      ]);
      // A cell a spreadsheet would run as a formula is defused.
      expect(parsed[4]![12]).toBe('\'=HYPERLINK("http://x")');
      expect(parsed[5]!.slice(7, 11)).toEqual(['secret.read', 'secret:nope', 'failure', '404']);
    }

    // Pages: X-Next-Cursor continues where the last export stopped.
    const page1 = await a.export({ limit: 4 });
    expect((page1.json() as Json[]).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    const cursor = page1.headers['x-next-cursor'] as string;
    expect(cursor).toEqual(expect.any(String));
    const page2 = await a.export({ limit: 4, cursor });
    expect((page2.json() as Json[]).map((r) => r.seq)).toEqual([5, 6, 7, 8]);
    const filtered = await a.export({ format: 'json', action: 'audit.export' });
    expect((filtered.json() as Json[]).map((r) => [r.action, r.metadata])).toEqual([
      ['audit.export', { format: 'json', rows: 5 }], ['audit.export', { format: 'csv', rows: 6 }],
      ['audit.export', { format: 'json', rows: 4 }], ['audit.export', { format: 'json', rows: 4 }],
    ]);
  });

  it('keeps a test-mode key on the sandbox\'s own log', async () => {
    const tenant = uniqueTenant('sandboxed');
    const live = await t.key({ tenant });
    const test = await t.key({ tenant, mode: 'test' });
    await g11(t.app, live).create({ name: 'x', value: 'live' });
    await g11(t.app, test).create({ name: 'x', value: 'test' });
    await g11(t.app, test).get('x');
    const sandboxLog = json(await g11Audit(t.app, test).list());
    expect(sandboxLog.data.map((r: Json) => [r.mode, r.seq, r.action])).toEqual([['test', 2, 'secret.read'], ['test', 1, 'secret.create']]);
    expect(json(await g11Audit(t.app, live).list()).data.map((r: Json) => [r.mode, r.seq, r.action])).toEqual([['live', 1, 'secret.create']]);
    expect(sandboxLog.data[0].timestamp).toMatch(ISO);
  });

  it('records API-key operations by the record id, never the key', async () => {
    const admin = await t.freshTenant();
    const keys = g11Keys(t.app, admin);
    const created = json(await keys.create({ name: 'ci deploy', scopes: ['secrets:read'] }));
    const rotated = json(await keys.rotate(created.id, { gracePeriodSeconds: 0 }));
    expect((await keys.revoke(rotated.id)).statusCode).toBe(204);
    const rows = json(await g11Audit(t.app, admin).list()).data.map((r: Json) => [r.action, r.resource, r.status]);
    expect(rows).toEqual([
      ['apikey.revoke', `api-key:${rotated.id}`, 204], ['apikey.rotate', `api-key:${created.id}`, 201], ['apikey.create', 'api-key', 201],
    ]);
    const everything = JSON.stringify(await dumpAudit(t));
    for (const k of [created.key, rotated.key, admin]) expect(everything).not.toContain(k);
  });
});

/** The store of an app whose audit appends can be made to fail: the real one, wrapped. */
async function openStore(file: string): Promise<Storage> {
  return testStoreKind() === 'postgres' ? openTestPostgresStorage(file) : createSqliteStorage({ file });
}

describe('G11 audit logs: errors', () => {
  let t: TestApp;
  let failAppends = false;
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-audit-failing-'));
  beforeAll(async () => {
    const real = await openStore(join(dir, 'mnemo.db'));
    // The real store, but its audit appends fail while failAppends is set (a full disk, a lost connection).
    const storage: Storage = {
      ...real,
      audit: {
        ...real.audit,
        append: async (entry, heads) => {
          if (failAppends) throw new Error('disk full');
          return real.audit.append(entry, heads);
        },
      },
    };
    t = await createTestApp({ overrides: { storage } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 400 VALIDATION_ERROR for bad filters, limits and cursors', async () => {
    const a = g11Audit(t.app, await t.freshTenant());
    const fields = async (res: Awaited<ReturnType<typeof a.list>>) => {
      expect(res.statusCode, res.body).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
      return json(res).error.details.fields.map((f: Json) => f.field);
    };
    expect(await fields(await a.list('action=Secret.Read'))).toEqual(['action']);
    expect(await fields(await a.list('action=secret.*.*'))).toEqual(['action']);
    expect(await fields(await a.list('from=yesterday'))).toEqual(['from']);
    expect(await fields(await a.list('from=2026-06-02T00:00:00Z&to=2026-06-01T00:00:00Z'))).toEqual(['from']);
    expect(await fields(await a.list('region=eu_west'))).toEqual(['region']);
    expect(await fields(await a.export({ region: 'x'.repeat(33) }))).toEqual(['region']);
    expect(await fields(await a.list('limit=0'))).toEqual(['limit']);
    expect(await fields(await a.list('limit=101'))).toEqual(['limit']);
    expect(await fields(await a.list('cursor=not-a-cursor'))).toEqual(['cursor']);
    expect(await fields(await a.export({ format: 'xml' }))).toEqual(['format']);
    expect(await fields(await a.export({ limit: 10_001 }))).toEqual(['limit']);
    // A list's cursor does not continue an export (they walk opposite ways), nor the other way round.
    for (let i = 0; i < 3; i++) await a.list();
    const listCursor = json(await a.list('limit=1')).pagination.cursor as string;
    expect(await fields(await a.export({ cursor: listCursor }))).toEqual(['cursor']);
    const exportCursor = (await a.export({ limit: 1 })).headers['x-next-cursor'] as string;
    expect(await fields(await a.list(`cursor=${encodeURIComponent(exportCursor)}`))).toEqual(['cursor']);
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
    const res = await g11Audit(t.app, await t.freshTenant()).get('aud_nothing');
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'Audit log entry "aud_nothing" not found', details: {} } });
  });

  it('records refused requests with their status, and never the text of an invalid name', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    expect((await s.create({ name: '../etc/passwd', value: 'x' })).statusCode).toBe(400);
    expect((await s.create({ name: 'ok', value: 'v', expiresIn: 'soon' })).statusCode).toBe(400);
    expect((await g11(t.app, await t.key({ scopes: ['secrets:read'] })).delete('ok')).statusCode).toBe(403);
    const rows = json(await g11Audit(t.app, key).list()).data.map((r: Json) => [r.action, r.resource, r.outcome, r.status]);
    expect(rows).toEqual([
      ['secret.delete', 'secret:ok', 'failure', 403], ['secret.create', 'secret:ok', 'failure', 400], ['secret.create', 'secret', 'failure', 400],
    ]);
  });

  it('answers 500 INTERNAL_ERROR and withholds the answer when the audit row cannot be stored', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    await s.create({ name: 'guarded', value: 'the-secret-value' });
    failAppends = true;
    try {
      for (const res of [await s.get('guarded'), await s.create({ name: 'made', value: 'new-secret-value' }), await s.list(),
        await g11Audit(t.app, key).export({}), await s.get('missing')]) {
        expect(res.statusCode).toBe(500);
        expect(json(res)).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred', details: {} } });
        expect(res.body).not.toContain('secret-value');
        expect(res.headers['content-disposition']).toBeUndefined();
        expect(res.headers['x-request-id']).toEqual(expect.any(String));
      }
    } finally {
      failAppends = false;
    }
    // The write itself had happened (recording comes after it): the caller saw a 500, the log shows no row for it.
    expect(json(await s.get('made')).value).toBe('new-secret-value');
    const actions = json(await g11Audit(t.app, key).list()).data.map((r: Json) => r.action);
    expect(actions).toEqual(['secret.read', 'secret.create']);
  });
});

describe('G11 audit logs: security', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());

  it('needs audit:read (403 PERMISSION_DENIED), and records the refusal', async () => {
    const admin = await t.freshTenant();
    const secretsOnly = await t.key({ scopes: ['secrets:read', 'secrets:write', 'secrets:delete'] });
    const a = g11Audit(t.app, secretsOnly);
    for (const res of [await a.list(), await a.get('aud_x'), await a.export({})]) {
      expect(res.statusCode).toBe(403);
      expect(json(res)).toEqual({ error: { code: 'PERMISSION_DENIED', message: 'This API key lacks the audit:read scope', details: { requiredScope: 'audit:read' } } });
    }
    const auditor = g11Audit(t.app, await t.key({ scopes: ['audit:read'] }));
    const rows = json(await auditor.list()).data.map((r: Json) => [r.action, r.resource, r.outcome, r.status]);
    expect(rows).toEqual([
      ['audit.export', 'audit-log:*', 'failure', 403], ['audit.read', 'audit-log:aud_x', 'failure', 403], ['audit.read', 'audit-log:*', 'failure', 403],
    ]);
    expect((await auditor.export({ format: 'csv' })).statusCode).toBe(200);
    expect((await g11Audit(t.app, admin).list()).statusCode).toBe(200);
  });

  it("never shows another tenant's or mode's rows: lists and exports stay apart, an id answers 404", async () => {
    const alice = await t.key({ tenant: uniqueTenant('alice') });
    await g11(t.app, alice).create({ name: 'alice-secret', value: 'v' });
    const aliceRow = json(await g11Audit(t.app, alice).list()).data[0];
    for (const other of [await t.key({ tenant: uniqueTenant('mallory') }), await t.key({ tenant: aliceRow.tenantId, mode: 'test' })]) {
      const a = g11Audit(t.app, other);
      const got = await a.get(aliceRow.id);
      expect(got.statusCode).toBe(404);
      expect(json(got)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: `Audit log entry "${aliceRow.id}" not found`, details: {} } });
      expect(json(await a.list('resource=secret:alice-secret')).data).toEqual([]);
      expect(json(await a.list()).data.every((r: Json) => r.tenantId !== aliceRow.tenantId || r.mode !== 'live')).toBe(true);
      expect((await a.export({ resource: 'secret:alice-secret' })).json()).toEqual([]);
      const csv = await a.export({ format: 'csv', resource: 'secret:alice-secret' });
      expect(csv.body.split('\r\n').filter(Boolean)).toHaveLength(1);
    }
    // Alice's log holds only her own requests.
    expect(json(await g11Audit(t.app, alice).list()).data.map((r: Json) => r.action)).toEqual(['audit.read', 'secret.create']);
  });

  it('holds no secret value and no API key text in any row or export', async () => {
    const key = await t.freshTenant();
    const s = g11(t.app, key);
    const markers = Array.from({ length: 5 }, (_, i) => `value-marker-${i}-${Math.random().toString(36).slice(2)}`);
    await s.create({ name: 'm0', value: markers[0] });
    await s.update('m0', { value: markers[1] });
    await s.get('m0');
    await s.get('m0', 'version=1');
    // Refused requests carrying values: a bad name, a bad expiry, a duplicate.
    await s.create({ name: `bad/${markers[2]}`, value: markers[3] });
    await s.update('m0', { value: markers[4], expiresIn: 'never' });
    await s.create({ name: 'm0', value: markers[4] });
    const exports = [await g11Audit(t.app, key).export({}), await g11Audit(t.app, key).export({ format: 'csv' })];
    const dump = JSON.stringify(await dumpAudit(t));
    expect(dump).toContain('secret:m0');
    const keys = [key, await t.key()];
    for (const text of [...markers, ...keys, ...keys.map((k) => k.slice(11))]) {
      expect(dump.includes(text), text).toBe(false);
      for (const e of exports) expect(e.body.includes(text), text).toBe(false);
    }
  });

  it('records a HEAD of a secret as the read it is (the GET handler runs and opens the value)', async () => {
    const key = await t.freshTenant();
    await g11(t.app, key).create({ name: 'headed', value: 'v' });
    const head = await t.app.inject({ method: 'HEAD', url: '/v1/security/secrets/headed', headers: { authorization: `Bearer ${key}` } });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const rows = json(await g11Audit(t.app, key).list()).data.map((r: Json) => [r.action, r.resource, r.status]);
    expect(rows).toEqual([['secret.read', 'secret:headed', 200], ['secret.create', 'secret:headed', 201]]);
  });

  it('refuses to register a G11 route whose operation audits nothing or that names no audit resource', () => {
    const route = (config: object) => ({ method: ['GET', 'POST'], url: '/v1/security/x', config }) as unknown as RouteOptions;
    expect(() => requireAuditedRoutes(route({ operation: 'secret.read', auditResource: () => 'secret' }))).not.toThrow();
    expect(() => requireAuditedRoutes(route({ operation: 'secret.read' })))
      .toThrow('G11 route GET,POST /v1/security/x must run an audited operation and name its auditResource');
    // memory.read is an operation, but not one the audit log records.
    expect(() => requireAuditedRoutes(route({ operation: 'memory.read', auditResource: () => 'x' }))).toThrow('audited operation');
    expect(() => requireAuditedRoutes(route({}))).toThrow('audited operation');
  });

  it('records nothing for requests without a valid key (a flood of them cannot fill the log)', async () => {
    const before = await t.container.storage.transfer.count(auditTable);
    for (let i = 0; i < 30; i++) {
      for (const key of [undefined, 'mnemo_live_forged', `mnemo_live_${'A'.repeat(30)}abcdef`]) {
        expect((await g11(t.app, key).get('anything')).statusCode).toBe(401);
        expect((await g11Audit(t.app, key).list()).statusCode).toBe(401);
      }
    }
    expect(await t.container.storage.transfer.count(auditTable)).toBe(before);
  });

  it('records nothing for requests refused by a rate limit', async () => {
    const limited = await createTestApp({ env: { MNEMO_ENTERPRISE_RATE_LIMIT: '3' } });
    try {
      const tenant = uniqueTenant('limited');
      const busy = g11(limited.app, await limited.key({ tenant }));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await busy.get('x')).statusCode);
      expect(statuses).toEqual([404, 404, 404, 429, 429, 429]);
      const rows = json(await g11Audit(limited.app, await limited.key({ tenant })).list()).data;
      expect(rows.map((r: Json) => r.status)).toEqual([404, 404, 404]);
    } finally {
      await limited.close();
    }
  });
});
