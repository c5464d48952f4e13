import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startLiveApp, type LiveApp } from '../streams/support.ts';
import type { Json } from '../support/test-app.ts';

/**
 * A memory whose stored metadata nests deeper than SQLite's JSON functions accept (1000 levels), as an older
 * version could write it: metadata-filtered searches must answer with the other memories, not fail.
 */
const DEPTH = 1_500;
const deepMetadata = `{"team":"ops","deep":${'{"k":'.repeat(DEPTH - 1)}{}${'}'.repeat(DEPTH - 1)}}`;

const TEXT = 'blue green deploy runbook for friday releases';
const FILTER = { team: 'ops' };

describe('a stored memory whose metadata SQLite cannot read', () => {
  let t: LiveApp;
  let bearer: Record<string, string>;
  let readable: string;
  let poisoned: string;
  const warnings: { details: Json; message: string }[] = [];

  const inject = (method: 'GET' | 'POST', url: string, payload?: unknown) => t.app.inject({
    method, url, headers: { ...bearer, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  const ok = (res: { statusCode: number; body: string; json: () => unknown }): Json => {
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    return res.json() as Json;
  };
  const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

  beforeAll(async () => {
    t = await startLiveApp(); // listening: the SSE search needs a real socket
    t.container.warnings.attach({ warn: (details, message) => warnings.push({ details: details as Json, message }) });
    const key = await t.key();
    bearer = { authorization: `Bearer ${key}` };
    const create = async () => {
      const res = await t.app.inject({
        method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key },
        payload: { title: 'Deploy runbook', content: TEXT, metadata: FILTER },
      });
      expect(res.statusCode, res.body).toBe(201);
      return (res.json() as Json).data.id as string;
    };
    readable = await create();
    poisoned = await create();
    // What an older version could have stored: written straight into the database, beside the running server.
    const db = new Database(t.container.config.databaseFile);
    try {
      db.prepare('UPDATE memories SET metadata = ? WHERE id = ?').run(deepMetadata, poisoned);
      // The premise: SQLite itself refuses this row's JSON.
      expect(db.prepare('SELECT json_valid(metadata) FROM memories WHERE id = ?').pluck().get(poisoned)).toBe(0);
      expect(() => db.prepare("SELECT json_extract(metadata, '$.team') FROM memories WHERE id = ?").get(poisoned)).toThrow(/malformed JSON/);
    } finally {
      db.close();
    }
  });
  afterAll(async () => { await t?.close(); });

  it('G3 /search, /hybrid and /batch with a metadata filter answer with the readable memory', async () => {
    const search = ok(await inject('POST', '/api/v1/search', { query: TEXT, threshold: 0, filters: FILTER }));
    expect(search.matches.map((m: Json) => m.id)).toEqual([readable]);
    const hybrid = ok(await inject('POST', '/api/v1/search/hybrid', { query: TEXT, filters: FILTER }));
    expect(hybrid.matches.map((m: Json) => m.id)).toEqual([readable]);
    const batch = ok(await inject('POST', '/api/v1/search/batch', { searches: [{ query: TEXT, threshold: 0, filters: FILTER }] }));
    expect(batch.results[0].matches.map((m: Json) => m.id)).toEqual([readable]);
  });

  it('G4 /v1/search (query string and GET body), /v1/search/vector and /v1/search/stream answer with the readable memory', async () => {
    const base = { q: TEXT, similarity_threshold: '0' };
    const fromQuery = ok(await inject('GET', `/v1/search?${query({ ...base, metadata_filter: JSON.stringify(FILTER) })}`));
    expect(fromQuery.data.results.map((r: Json) => r.id)).toEqual([readable]);
    const fromBody = ok(await inject('GET', `/v1/search?${query(base)}`, { metadata_filter: FILTER }));
    expect(fromBody.data.results.map((r: Json) => r.id)).toEqual([readable]);
    const vector = new Array<number>(1536).fill(0);
    vector[0] = 1;
    const byVector = ok(await inject('POST', '/v1/search/vector', { vector, similarity_threshold: 0, metadata_filter: FILTER }));
    expect(byVector.data.results.map((r: Json) => r.id)).toEqual([readable]);
    const stream = await openStream(`${t.url}/v1/search/stream?${query({ ...base, metadata_filter: JSON.stringify(FILTER) })}`, bearer);
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor((f) => f.event === 'done');
      expect(stream.events('result').map((f) => f.data!.id)).toEqual([readable]);
    } finally {
      stream.close();
    }
  });

  it('G6 search operations with a metadata filter answer with the readable memory', async () => {
    const res = ok(await inject('POST', '/api/v1/batch', {
      operations: [{ type: 'search', query: TEXT, options: { threshold: 0, filters: FILTER } }],
    }));
    expect(res.data.operations[0].status).toBe('success');
    expect(res.data.operations[0].result.results.map((r: Json) => r.id)).toEqual([readable]);
  });

  it('searches without a metadata filter still find both, and the skipped memory was logged once', async () => {
    const all = ok(await inject('GET', `/v1/search?${query({ q: TEXT, similarity_threshold: '0' })}`));
    expect(all.data.results.map((r: Json) => r.id).sort()).toEqual([readable, poisoned].sort());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toMatchObject({ tenant: 'acme', mode: 'live', workspace: 'default', memory_ids: [poisoned] });
    expect(warnings[0]!.message).toMatch(/cannot read/);
  });
});
