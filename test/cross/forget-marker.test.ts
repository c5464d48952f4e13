import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PGlite } from '@electric-sql/pglite';
import { ALL_PERMISSIONS } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { mnemo } from '../support/cli.ts';
import { workerPglite } from '../support/pglite.ts';
import { testStoreKind } from '../support/test-store.ts';
import type { Json } from '../support/test-app.ts';
import { bearer, openStream, startLiveApp, type LiveApp, type SseClient } from '../streams/support.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';

/**
 * "Forgetting that forgets" (docs/api.md, "Forgetting"): a memory holding a unique marker (in its title, content,
 * tags, metadata and an earlier version) is forgotten — by `POST /api/v1/memories/forget` with a filter that matches
 * it, and by a plain DELETE — and the marker is then found nowhere: no API answer, no stream replay from before it
 * was written, no webhook retry (a receiver that failed while it existed, echoing the body so the delivery's
 * `last_error` held it, then succeeds), no export, and not in the store: the SQLite file and its WAL after a
 * checkpoint, or (PostgreSQL) any row of any table.
 *
 * The memory is never searched for by the marker: a search's query is the caller's words and is kept as such (the
 * search log, search.performed), which forgetting a memory does not touch. Searches here use other words of it.
 */
describe('a forgotten memory is nowhere', () => {
  const kind = testStoreKind();
  const clock = new ManualClock(Date.now());
  let t: LiveApp;
  let receiver: Receiver;
  /** While true the receiver answers 500 and echoes the body (what some receivers do): the delivery keeps it as last_error. */
  let failing = true;

  beforeAll(async () => {
    receiver = await startReceiver((_req, res, r) => {
      if (failing) {
        res.statusCode = 500;
        res.end(r.body);
      } else res.end('ok');
    });
    t = await startLiveApp({ clock }, { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** PostgreSQL: the worker's PGlite, and the schema the app's store lives in (the one holding this tenant's keys). */
  async function appSchema(): Promise<{ db: PGlite; schema: string }> {
    const db = await workerPglite();
    const schemas = (await db.query<{ table_schema: string }>(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'api_keys' AND table_schema <> 'public'")).rows;
    for (const { table_schema: schema } of schemas) {
      const mine = await db.query(`SELECT 1 FROM "${schema}".api_keys WHERE tenant_id = $1`, [t.tenant]);
      if (mine.rows.length > 0) return { db, schema };
    }
    throw new Error(`no schema holds tenant ${t.tenant}`);
  }

  /** Sends every delivery that is due now, until none is left (each tick sends a few per webhook). */
  async function deliverDue(): Promise<void> {
    for (let i = 0; i < 50 && await t.container.deliveries.tick() > 0; i++);
  }

  /** Every stored byte (SQLite: the file and its WAL after a checkpoint) or row (PostgreSQL: every table) holding `text`. */
  async function storedPlacesOf(text: string): Promise<string[]> {
    if (kind === 'postgres') {
      const { db, schema } = await appSchema();
      const tables = (await db.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [schema])).rows;
      expect(tables.length).toBeGreaterThan(20);
      const found: string[] = [];
      for (const { table_name: name } of tables) {
        const rows = (await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${schema}"."${name}" t WHERE strpos(t::text, $1) > 0`, [text])).rows;
        if (rows[0]!.n > 0) found.push(name);
      }
      return found;
    }
    const file = t.container.config.databaseFile;
    const raw = new Database(file);
    try {
      for (let i = 0; i < 100; i++) {
        const [busy] = raw.pragma('wal_checkpoint(TRUNCATE)', { simple: false }) as { busy: number }[];
        if (busy?.busy === 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      raw.close();
    }
    const needle = Buffer.from(text, 'utf8');
    return [file, `${file}-wal`, `${file}-shm`].filter((f) => existsSync(f) && readFileSync(f).includes(needle));
  }

  async function scenario(how: 'forget' | 'delete') {
    // Lowercase letters and digits ending in a digit: the keyword index keeps it as it is (no case folding, no stemming).
    const marker = `zq${randomBytes(12).toString('hex')}x7`;
    await t.freshTenant();
    const key = await t.key({ scopes: [...ALL_PERMISSIONS] });
    const h = { 'x-api-key': key, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = h) => {
      const res = await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, text: await res.text() };
    };
    const create = async (body: Json) => {
      const res = await call('POST', '/api/v1/memories', body);
      expect(res.status, res.text).toBe(201);
      return (JSON.parse(res.text) as Json).data as Json;
    };

    // A webhook for the doomed memories' events (its tag filter judges memory.deleted too), to a receiver failing for now.
    const hook = await call('POST', '/api/v1/webhooks', {
      url: `${receiver.url}/hook`, events: ['memory.created', 'memory.updated', 'memory.deleted', 'embedding.generated'],
      filters: { tags: ['doomed'] }, retry_policy: { max_attempts: 10 },
    }, { ...bearer(key), 'content-type': 'application/json' });
    expect(hook.status, hook.text).toBe(201);
    const live = await openStream(`${t.url}/api/v1/stream`, bearer(key));
    const streams: SseClient[] = [live];

    const before = await create({ title: 'Shopping list', content: 'Milk, bread and apples for the weekend' });
    const doomed = await create({
      title: `Vault notes ${marker}`, content: `The launch code for the north vault is ${marker}, kept by the night shift`,
      tags: ['doomed', `tag-${marker}`], metadata: { case: how, secret: marker },
    });
    // An earlier version holds the marker too (kept until the memory is forgotten).
    const updated = await call('PUT', `/api/v1/memories/${doomed.id}`, { content: `The launch code for the north vault changed from ${marker}` });
    expect(updated.status, updated.text).toBe(200);
    // It also comes in through a conversation (raw ingestion, written at once): the job keeps the turn and the
    // proposal's text beside the memory. The system turn is kept in the job but never becomes a memory.
    const ingest = await call('POST', '/api/v1/memories/ingest', {
      mode: 'raw', policy: 'auto', tags: ['doomed'], metadata: { case: how },
      messages: [{ role: 'system', content: 'A session about the vaults' }, { role: 'user', content: `The spare vault key is ${marker}, under the mat` }],
    });
    expect(ingest.status, ingest.text).toBe(202);
    const jobId = (JSON.parse(ingest.text) as Json).data.id as string;
    expect(await t.container.ingestionWorker.drain()).toBe(1);
    const job = await call('GET', `/api/v1/memories/ingest/${jobId}?include=messages`);
    expect(job.text).toContain(marker);
    const [written] = (JSON.parse(job.text) as Json).data.proposals as Json[];
    expect(written).toMatchObject({ id: 'p1', status: 'applied', sources: [1] });
    const ingested = written!.memory_id as string;
    const after = await create({ title: 'Weather', content: 'Rain expected on Tuesday afternoon' });
    await live.waitFor((f) => f.event === 'memory.created' && f.data?.id === after.id);

    // Every delivery is tried once and fails: the deliveries stay pending, their last_error echoing the payload.
    await deliverDue();
    const failedBodies = receiver.received.map((r) => r.body).join('\n');
    expect(failedBodies).toContain(marker);
    receiver.received.length = 0;
    expect(await storedPlacesOf(marker)).not.toEqual([]);

    if (how === 'forget') {
      const filter = { tags: ['doomed'], case: 'forget' };
      const preview = await call('POST', '/api/v1/memories/forget', { filter, dry_run: true });
      expect(preview.status, preview.text).toBe(200);
      expect(JSON.parse(preview.text)).toMatchObject({ success: true, data: { dry_run: true, count: 2, ids_truncated: false } });
      expect(((JSON.parse(preview.text) as Json).data.ids as string[]).sort()).toEqual([doomed.id as string, ingested].sort());
      const forgot = await call('POST', '/api/v1/memories/forget', { filter });
      expect(forgot.status, forgot.text).toBe(200);
      expect(JSON.parse(forgot.text)).toMatchObject({ success: true, data: { dry_run: false, deleted: 2 } });
      expect(((JSON.parse(forgot.text) as Json).data.ids as string[]).sort()).toEqual([doomed.id as string, ingested].sort());
    } else {
      for (const id of [doomed.id as string, ingested]) {
        const deleted = await call('DELETE', `/api/v1/memories/${id}`);
        expect(deleted.status, deleted.text).toBe(200);
      }
    }
    await live.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === doomed.id);
    // Gone from the store at once, the pending deliveries' last_error (the echoed payloads) too: not left to the retries.
    expect(await storedPlacesOf(marker)).toEqual([]);

    // API answers: reads, lists, searches by other words of it, G2, G3, its history (a tombstone).
    const answers: string[] = [];
    const read = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await call(method, path, body, headers);
      answers.push(`${method} ${path} ${res.status} ${res.text}`);
      return res;
    };
    expect((await read('GET', `/api/v1/memories/${doomed.id}`)).status).toBe(404);
    expect((await read('GET', '/api/v1/memories?limit=100')).status).toBe(200);
    expect((await read('POST', '/api/v1/memories/search', { query: 'launch code north vault night shift', threshold: 0 })).status).toBe(200);
    expect((await read('POST', '/api/v1/search/hybrid', { query: 'launch code north vault', threshold: 0 }, { ...bearer(key), 'content-type': 'application/json' })).status).toBe(200);
    expect((await read('GET', `/api/v1/memory/mem_${doomed.id}`, undefined, bearer(key))).status).toBe(404);
    expect((await read('GET', '/api/v1/memory', undefined, bearer(key))).status).toBe(200);
    await read('GET', `/api/v1/memories/${doomed.id}/history`);
    // The job: the proposal and the turn it came from are blank, the rest of the job as it was.
    const jobAfter = await read('GET', `/api/v1/memories/ingest/${jobId}?include=messages`);
    expect(JSON.parse(jobAfter.text)).toMatchObject({ data: {
      state: 'completed', messages: [{ role: 'system', content: 'A session about the vaults' }, { role: 'user', content: '' }],
      proposals: [{ id: 'p1', status: 'applied', memory_id: ingested, content: '', forgotten: true }],
    } });
    expect(answers.join('\n')).not.toContain(marker);
    expect(answers.join('\n')).toContain(before.id as string);

    // The stream replayed from before the memory was written: its events are there, with its id only.
    const replay = await openStream(`${t.url}/api/v1/stream`, { ...bearer(key), 'last-event-id': live.events('memory.created')[0]!.id! });
    streams.push(replay);
    await replay.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === doomed.id);
    const replayed = replay.events().filter((f) => f.data?.id === doomed.id || f.data?.memory_id === doomed.id);
    expect(replayed.map((f) => f.event)).toEqual(expect.arrayContaining(['memory.created', 'memory.updated', 'embedding.generated', 'memory.deleted']));
    for (const f of replayed) expect(f.data).toMatchObject({ forgotten: true });
    expect(replay.text()).not.toContain(marker);
    expect(replay.text()).toContain(after.id as string);

    // The retries: the receiver now succeeds; what arrives of the memory is its id.
    failing = false;
    clock.advance(60 * 60_000);
    await deliverDue();
    const retried = receiver.received.map((r) => JSON.parse(r.body) as Json);
    const ofDoomed = retried.filter((b) => b.data.id === doomed.id || b.data.memory_id === doomed.id);
    expect(ofDoomed.map((b) => b.type as string).sort()).toEqual(
      ['embedding.generated', 'embedding.generated', 'memory.created', 'memory.deleted', 'memory.updated']);
    for (const b of ofDoomed) expect(b.data).toMatchObject({ forgotten: true });
    const ofIngested = retried.filter((b) => b.data.id === ingested || b.data.memory_id === ingested);
    expect(ofIngested.map((b) => b.type as string)).toContain('memory.created');
    for (const b of ofIngested) expect(b.data).toMatchObject({ forgotten: true });
    expect(receiver.received.map((r) => r.body).join('\n')).not.toContain(marker);
    receiver.received.length = 0;
    failing = true;

    // The export (SQLite: `mnemo export` on the server's data directory; on PostgreSQL the table scan below covers it).
    if (kind === 'sqlite') {
      const exported = await mnemo({ MNEMO_DATA_DIR: t.container.config.dataDir, MNEMO_EMBEDDINGS: 'hashing' }, 'export');
      expect(exported.error).toBeUndefined();
      expect(exported.stdout).toContain(after.id as string);
      expect(exported.stdout).not.toContain(marker);
    }

    for (const s of streams) s.close();
    // The store: the tombstone is there, the marker nowhere.
    expect(await storedPlacesOf(doomed.id as string)).not.toEqual([]);
    expect(await storedPlacesOf(marker)).toEqual([]);
  }

  it('forgets a memory by filter (POST /api/v1/memories/forget, after a dry run)', async () => {
    await scenario('forget');
  });

  it('forgets a memory deleted one by one (DELETE /api/v1/memories/:id)', async () => {
    await scenario('delete');
  });
});
