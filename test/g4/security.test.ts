import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { actorIn } from '../support/fixtures.ts';
import { expectG4Error, g4, ok, type G4Client } from './client.ts';

const texts = (data: Json) => (data.suggestions as Json[]).map((s) => s.text as string);
const titles = (data: Json) => (data.results as Json[]).map((r) => r.title as string);

describe('G4 security: tenants, modes and workspaces never cross', () => {
  let t: TestApp;
  let alice: G4Client;
  let bob: G4Client;
  const scopeOf = (tenantId: string, mode: 'live' | 'test' = 'live', workspace = 'default'): Scope => ({ tenantId, mode, workspace });
  const remember = (scope: Scope, title: string, content: string, tags: string[] = [], metadata: Record<string, unknown> = {}) =>
    t.container.memories.create(scope, actorIn(scope, 'someone'), { title, content, tags, metadata });

  let aliceCo: string, bobCo: string, carolCo: string;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.freshTenant();
    aliceCo = uniqueTenant('alice-co');
    bobCo = uniqueTenant('bob-co');
    carolCo = uniqueTenant('carol-co');
    alice = g4(t.app, await t.key({ tenant: aliceCo, user: 'alice' }));
    bob = g4(t.app, await t.key({ tenant: bobCo, user: 'bob' }));
  });

  it("never returns another tenant's memories from semantic or vector search", async () => {
    const secret = await remember(scopeOf(aliceCo), 'Payroll secrets', 'salary spreadsheet password hunter2', ['hr'], { dept: 'hr' });
    const q = { q: 'salary spreadsheet password', similarity_threshold: 0 };
    expect(ok(await alice.search(q)).results.map((r: Json) => r.id)).toEqual([secret.id]);
    const theirs = ok(await bob.search(q));
    expect(theirs).toMatchObject({ results: [], pagination: { total: 0 } });
    expect(ok(await bob.search({ ...q, tags: 'hr' }, { metadata_filter: { dept: 'hr' } })).results).toEqual([]);

    // Even Alice's exact vector finds nothing for Bob.
    const { embedding } = ok(await alice.embed({ text: t.container.memories.embeddingText(secret.title, secret.content) }));
    expect(ok(await alice.vector({ vector: embedding })).results[0].id).toBe(secret.id);
    const bobs = ok(await bob.vector({ vector: embedding, similarity_threshold: 0 }));
    expect(bobs).toMatchObject({ results: [], pagination: { total: 0 } });
  });

  it("never suggests another tenant's past queries, tags or titles", async () => {
    await remember(scopeOf(aliceCo), 'Acquisition plan', 'Project Falcon: buy the competitor', ['acquisition', 'confidential']);
    for (let i = 0; i < 3; i++) ok(await alice.search({ q: 'acquisition of competitor falcon' }));
    expect(texts(ok(await alice.suggestions({ q: 'acq' })))).toEqual(['acquisition of competitor falcon']);
    expect(texts(ok(await alice.suggestions({ q: 'acq', type: 'tag' })))).toEqual(['acquisition']);
    expect(texts(ok(await alice.suggestions({ q: 'plan', type: 'title' })))).toEqual(['Acquisition plan']);

    ok(await bob.search({ q: 'access logs' }));
    expect(texts(ok(await bob.suggestions({ q: 'a' })))).toEqual(['access logs']);
    expect(texts(ok(await bob.suggestions({ q: 'acq' })))).toEqual([]);
    expect(texts(ok(await bob.suggestions({ q: 'c', type: 'tag' })))).toEqual([]);
    expect(texts(ok(await bob.suggestions({ q: 'plan', type: 'title' })))).toEqual([]);
    // And Alice does not see Bob's.
    expect(texts(ok(await alice.suggestions({ q: 'a' })))).toEqual(['acquisition of competitor falcon']);
  });

  it('keeps test-mode data and searches apart from live data of the same tenant', async () => {
    const sandbox = g4(t.app, await t.key({ tenant: aliceCo, user: 'alice', mode: 'test' }));
    await remember(scopeOf(aliceCo), 'live', 'production database note', ['prod-only']);
    await remember(scopeOf(aliceCo, 'test'), 'test', 'sandbox database note', ['sandbox-only']);
    const q = { q: 'database note', similarity_threshold: 0 };
    expect(titles(ok(await alice.search(q)))).toEqual(['live']);
    expect(titles(ok(await sandbox.search(q)))).toEqual(['test']);
    const { embedding } = ok(await alice.embed({ text: 'production database note' }));
    expect(titles(ok(await sandbox.vector({ vector: embedding, similarity_threshold: 0 })))).toEqual(['test']);

    ok(await sandbox.search({ q: 'sandbox only query' }));
    expect(texts(ok(await alice.suggestions({ q: 'sandbox' })))).toEqual([]);
    expect(texts(ok(await sandbox.suggestions({ q: 'sandbox' })))).toEqual(['sandbox only query']);
    expect(texts(ok(await alice.suggestions({ q: 's', type: 'tag' })))).toEqual([]);
    expect(texts(ok(await sandbox.suggestions({ q: 'p', type: 'tag' })))).toEqual([]);
  });

  it('keeps workspaces apart (X-Workspace-ID)', async () => {
    const key = await t.key({ tenant: carolCo, user: 'carol' });
    const main = g4(t.app, key);
    const research = g4(t.app, key, { 'x-workspace-id': 'research' });
    await remember(scopeOf(carolCo), 'Roadmap', 'quarterly roadmap for the product', ['plans']);
    await remember(scopeOf(carolCo, 'live', 'research'), 'Experiment', 'quarterly roadmap experiment results', ['lab']);
    const q = { q: 'quarterly roadmap', similarity_threshold: 0 };
    expect(titles(ok(await main.search(q)))).toEqual(['Roadmap']);
    expect(titles(ok(await research.search(q)))).toEqual(['Experiment']);
    ok(await research.search({ q: 'lab notebook' }));
    expect(texts(ok(await main.suggestions({ q: 'lab' })))).toEqual([]);
    expect(texts(ok(await research.suggestions({ q: 'lab' })))).toEqual(['lab notebook']);
    expect(texts(ok(await main.suggestions({ q: 'l', type: 'tag' })))).toEqual([]);
    expect(texts(ok(await research.suggestions({ q: 'l', type: 'tag' })))).toEqual(['lab']);
  });

  it('escapes HTML in highlights and never lets a filter reach outside the scope', async () => {
    await remember(scopeOf(aliceCo), 'XSS', 'deploy <script>alert("x")</script> & more deploy notes', [], { owner: 'alice' });
    await remember(scopeOf(bobCo), 'Bob deploy', 'deploy notes of bob', [], { owner: 'alice' });
    const hit = ok(await alice.search({ q: 'deploy notes', similarity_threshold: 0 })).results;
    expect(hit).toHaveLength(1);
    const joined = (hit[0].highlights as string[]).join(' ');
    expect(joined).not.toContain('<script>');
    expect(joined).toContain('&#60;script&#62;');
    expect(joined).toContain('<mark>deploy</mark>');
    // A metadata filter naming Alice from Bob's side still sees only Bob's data.
    expect(titles(ok(await bob.search({ q: 'deploy notes', similarity_threshold: 0 }, { metadata_filter: { owner: 'alice' } })))).toEqual(['Bob deploy']);
  });

  it('answers a revoked key and an unknown key identically, without leaking anything', async () => {
    const { key, record } = await t.container.apiKeys.create({ tenantId: aliceCo, userId: 'alice', tier: 'pro', mode: 'live' });
    const stable = (body: Json) => ({ ...body, meta: undefined, error: { ...body.error, message: undefined } });
    ok(await g4(t.app, key).search({ q: 'x' }));
    await t.container.apiKeys.revoke(record.id);
    const revoked = await g4(t.app, key).search({ q: 'x' });
    const unknown = await g4(t.app, 'mnemo_live_notAKeyAtAll').search({ q: 'x' });
    expectG4Error(revoked, 401, 'UNAUTHORIZED');
    expectG4Error(unknown, 401, 'UNAUTHORIZED');
    expect(stable(revoked.json() as Json)).toEqual(stable(unknown.json() as Json));
    expect(revoked.body).not.toContain('alice');
  });
});
