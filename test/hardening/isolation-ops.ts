import fc from 'fast-check';
import { expect } from 'vitest';
import { parseFrames } from '../streams/support.ts';
import { makeMemory } from '../support/fixtures.ts';
import type { Json, TestApp } from '../support/test-app.ts';
import { paddedHashVector } from '../g2/client.ts';
import {
  addMemory, legacyIdOf, logQuery, publishedOf, resolveLegacy, resolveUuid, type Model, type ModelMemory, type ScopeModel,
} from './isolation-model.ts';
import { ACTORS, call, keyOf, type BoundActor, type Listeners } from './isolation-world.ts';

/**
 * The operations the isolation property generates, across every memory surface, and how each is checked against
 * the model: an answer may only ever reflect the caller's own scope. The vocabulary is tiny and shared by every
 * actor, so the same titles, contents, tags, client ids, topic names and queries exist in every scope.
 */
export const TITLES = ['Deploy notes', 'Payroll', 'Team plan', 'Garden log'];
export const CONTENTS = [
  'We deploy with blue green on Fridays', 'salary spreadsheet kept by finance', 'notes about the team roadmap',
  'tomatoes need water every morning and the team waters them',
];
export const TAGS = ['ops', 'hr', 'team', 'garden'];
export const QUERIES = ['deploy fridays', 'salary finance', 'team roadmap notes', 'water tomatoes'];
const STATIC_CLIENT_IDS = ['note', 'note-1', 'note-10', 'shared.id:1', `n${'0'.repeat(127)}`];
const TOPIC_NAMES = ['Projects', 'Ops'];
const TITLE_PARTS = ['note', 'PAY', 'team', 'o'];
const SEED_PREFIXES = ['cafe0001', 'cafe0002'];

const actor = fc.nat({ max: ACTORS.length - 1 });
/** A memory of any scope (deleted ones included): `n` modulo what that scope ever held. */
const pick = fc.record({ from: actor, n: fc.nat(64) });
type Pick = { from: number; n: number };
/** How much of a UUID a G1 / G6 call sends: a prefix of 8+ characters, or all of it. */
const idLength = fc.oneof({ weight: 1, arbitrary: fc.constant(36) }, { weight: 2, arbitrary: fc.integer({ min: 8, max: 14 }) });
const tags = fc.subarray(TAGS, { maxLength: 2 });
const index = (n: number) => fc.nat(n - 1);
/** A G2 client id: a fixed one (shared by every scope), or another memory's UUID, `mem_<uuid>` or its 8-char prefix. */
const clientId = fc.oneof(
  fc.constantFrom(...STATIC_CLIENT_IDS),
  fc.record({ of: pick, form: fc.constantFrom('uuid', 'mem', 'prefix') }),
);
const legacyForm = fc.constantFrom('client', 'mem', 'uuid', 'UUID');

const batchItem = fc.oneof(
  fc.record({ type: fc.constant('create' as const), c: index(CONTENTS.length), t: fc.option(index(TITLES.length)), tags }),
  fc.record({ type: fc.constantFrom('read' as const, 'update' as const, 'delete' as const), target: pick, len: idLength, t: index(TITLES.length) }),
  fc.record({ type: fc.constant('search' as const), q: index(QUERIES.length) }),
);

/**
 * What every run starts with: in each scope a memory whose UUID shares its first 13 characters with one in every
 * other scope, a G1 memory and a G2 memory with the same client id, titles, contents and tags everywhere.
 */
export const PRELUDE: Op[] = ACTORS.flatMap((_, a) => [
  { k: 'seed' as const, a, p: 0 },
  // Two of them: a prefix both share is ambiguous there (and only there).
  ...(a === 0 || a === 3 ? [{ k: 'seed' as const, a, p: 0 }] : []),
  { k: 'g1.create' as const, a, t: 0, c: 0, tags: ['team'], topic: null, store: false },
  { k: 'g2.create' as const, a, cid: 'note', c: 1, tags: ['ops'] },
]);

/** Operations that write memories (also used by the score property, for the other scopes). */
export const writeOp = (a: fc.Arbitrary<number>) => fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('g1.create' as const), a, t: index(TITLES.length), c: index(CONTENTS.length), tags, topic: fc.option(pick), store: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('seed' as const), a, p: index(SEED_PREFIXES.length) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('g1.update' as const), a, target: pick, len: idLength, t: index(TITLES.length) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('g1.delete' as const), a, target: pick, len: idLength }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('g2.create' as const), a, cid: fc.option(clientId), c: index(CONTENTS.length), tags }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('g2.update' as const), a, target: pick, form: legacyForm, c: index(CONTENTS.length) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('g2.delete' as const), a, target: pick, form: legacyForm }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('g6.batch' as const), a, items: fc.array(batchItem, { minLength: 1, maxLength: 4 }) }) },
);

export const readOp = (a: fc.Arbitrary<number>) => fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('g1.get' as const), a, target: pick, len: idLength, upper: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('g2.get' as const), a, target: pick, form: legacyForm }) },
  fc.record({ k: fc.constant('g1.list' as const), a, tag: fc.option(index(TAGS.length)) }),
  fc.record({ k: fc.constant('g1.search' as const), a, q: index(QUERIES.length) }),
  fc.record({ k: fc.constant('topic.create' as const), a, name: index(TOPIC_NAMES.length), parent: fc.option(pick) }),
  fc.record({ k: fc.constantFrom('topic.get' as const, 'topic.memories' as const), a, target: pick }),
  fc.record({ k: fc.constant('topic.list' as const), a }),
  fc.record({ k: fc.constantFrom('g3.search' as const, 'g4.search' as const, 'g4.stream' as const), a, q: index(QUERIES.length) }),
  fc.record({ k: fc.constant('g4.searchWithBody' as const), a, q: index(QUERIES.length) }),
  fc.record({ k: fc.constant('g3.hybrid' as const), a, q: index(QUERIES.length), rerank: fc.boolean() }),
  fc.record({ k: fc.constant('g3.batch' as const), a, qs: fc.array(index(QUERIES.length), { minLength: 1, maxLength: 3 }) }),
  fc.record({ k: fc.constant('g4.vector' as const), a, c: index(CONTENTS.length) }),
  fc.record({ k: fc.constant('g4.suggest' as const), a, type: fc.constantFrom('query' as const, 'tag' as const, 'title' as const), q: fc.nat(3) }),
  fc.record({ k: fc.constant('g5.embed' as const), a }),
  fc.record({ k: fc.constantFrom('g9.list' as const, 'g10.list' as const, 'g10.publish' as const), a }),
  fc.record({ k: fc.constantFrom('g9.get' as const, 'g10.get' as const), a, from: actor }),
);

export const anyOp = fc.oneof({ weight: 1, arbitrary: writeOp(actor) }, { weight: 1, arbitrary: readOp(actor) });

type WriteOp = ReturnType<typeof writeOp> extends fc.Arbitrary<infer T> ? T : never;
type ReadOp = ReturnType<typeof readOp> extends fc.Arbitrary<infer T> ? T : never;
export type Op = WriteOp | ReadOp;

export interface RunContext {
  t: TestApp;
  actors: BoundActor[];
  model: Model;
  /** The listening server's base URL, for answers that need a real socket (absent: those operations are skipped). */
  baseUrl?: string;
  /** Streams and webhooks of the run (absent where a property needs none). */
  listeners?: Listeners;
  /** G6 requests per key so far (10 a minute per key: the runner stays under it). */
  batches: Map<string, number>;
  published: number;
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const pickMemory = (ctx: RunContext, p: Pick): ModelMemory | undefined => {
  const all = [...ctx.model.scopes[p.from]!.ever.values()];
  return all.length === 0 ? undefined : all[p.n % all.length];
};
const pickTopic = (ctx: RunContext, p: Pick): string | undefined => {
  const all = [...ctx.model.scopes[p.from]!.topics.keys()];
  return all.length === 0 ? undefined : all[p.n % all.length];
};
const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Asserts that a list of ids is exactly the scope's memories (every search below asks for all of them). */
function expectAll(ids: string[], s: ScopeModel, what: string): void {
  expect(sorted(ids), what).toEqual(sorted(s.memories.keys()));
}

/** Asserts that an answer names no UUID outside the caller's scope. */
function expectOnlyOwnUuids(raw: string, s: ScopeModel, what: string): void {
  for (const id of raw.match(UUID_IN_TEXT) ?? []) expect(s.ever.has(id.toLowerCase()), `${what}: foreign id ${id}`).toBe(true);
}

async function embedVector(t: TestApp, text: string): Promise<Float32Array> {
  const [v] = await t.container.embedder.embed([text]);
  return v!;
}

/** Runs one operation as its actor and checks the answer against the model; then updates the model. */
export async function apply(ctx: RunContext, op: Op): Promise<void> {
  const { t, model } = ctx;
  const app = t.app;
  const me = ctx.actors[op.a]!;
  const s = model.scopes[op.a]!;
  const what = `${op.k} as ${me.name}`;
  const k = me.apiKeyHeaders;
  const b = me.bearerHeaders;

  switch (op.k) {
    case 'g1.create': {
      const topicId = op.topic ? pickTopic(ctx, op.topic) : undefined;
      const body = { title: TITLES[op.t]!, content: CONTENTS[op.c]!, tags: op.tags, metadata: { source: 'iso', title: TITLES[op.t]! }, ...(topicId ? { topic_id: topicId } : {}) };
      // `/api/v1/store` is the deprecated name of the same create.
      const res = await call(app, 'POST', op.store ? '/api/v1/store' : '/api/v1/memories', k, body);
      if (topicId && !s.topics.has(topicId)) {
        expect(res.status, `${what}: another scope's topic`).toBe(400);
        expect(res.body.error.details).toEqual([{ field: 'topic_id', message: 'no such topic' }]);
        return;
      }
      expect(res.status, res.raw).toBe(201);
      addMemory(s, { id: res.body.data.id as string, clientId: null, title: body.title, content: body.content, tags: op.tags, topicId: topicId ?? null }, true);
      return;
    }
    case 'seed': {
      // A UUID chosen by the test, sharing its first 8+ characters with seeds of every other scope.
      const id = `${SEED_PREFIXES[op.p]!}-0000-4000-8000-${(model.seeds++).toString(16).padStart(12, '0')}`;
      const m = makeMemory({ tenantId: me.tenant, mode: me.mode, workspace: me.workspace }, { id, title: TITLES[op.p]!, content: CONTENTS[op.p]! });
      const vector = await embedVector(t, `${m.title}\n\n${m.content}`);
      await t.container.storage.memories.insert(m, { modelId: t.container.embedder.modelId, vector });
      addMemory(s, { id, clientId: null, title: m.title, content: m.content, tags: [], topicId: null }, false);
      return;
    }
    case 'g1.get':
    case 'g1.update':
    case 'g1.delete': {
      const target = pickMemory(ctx, op.target);
      if (!target) return;
      const sent = op.k === 'g1.get' && op.upper ? target.id.slice(0, op.len).toUpperCase() : target.id.slice(0, op.len);
      const url = `/api/v1/memories/${sent}`;
      const res = op.k === 'g1.get' ? await call(app, 'GET', url, k)
        : op.k === 'g1.update' ? await call(app, 'PUT', url, k, { title: TITLES[op.t]! })
          : await call(app, 'DELETE', url, k);
      expectOnlyOwnUuids(res.raw, s, what);
      const expected = resolveUuid(s, sent);
      if ('missing' in expected) {
        expect(res.status, `${what} ${sent}: ${res.raw}`).toBe(404);
        expect(res.body.error.code).toBe('MEMORY_NOT_FOUND');
      } else if ('ambiguous' in expected) {
        expect(res.status, `${what} ${sent}: ${res.raw}`).toBe(409);
        expect(res.body.error.code).toBe('AMBIGUOUS_ID');
        expect(sorted(res.raw.match(UUID_IN_TEXT)!)).toEqual(sorted(expected.ambiguous));
      } else {
        expect(res.status, `${what} ${sent}: ${res.raw}`).toBe(200);
        expect(res.body.data.id).toBe(expected.found.id);
        if (op.k === 'g1.get') expect(res.body.data).toMatchObject({ title: expected.found.title, content: expected.found.content, tags: expected.found.tags });
        if (op.k === 'g1.update') expected.found.title = TITLES[op.t]!;
        if (op.k === 'g1.delete') s.memories.delete(expected.found.id);
      }
      return;
    }
    case 'g1.list': {
      const tag = op.tag === null ? undefined : TAGS[op.tag]!;
      const res = await call(app, 'GET', `/api/v1/memories?limit=100${tag ? `&tags=${tag}` : ''}`, k);
      expect(res.status, res.raw).toBe(200);
      const want = [...s.memories.values()].filter((m) => !tag || m.tags.includes(tag));
      expect(res.body.pagination.total, what).toBe(want.length);
      expect(sorted(res.body.data.map((m: Json) => m.id)), what).toEqual(sorted(want.map((m) => m.id)));
      for (const m of res.body.data as Json[]) expect(m.title).toBe(s.memories.get(m.id)!.title);
      return;
    }
    case 'g1.search': {
      const res = await call(app, 'POST', '/api/v1/memories/search', k, { query: QUERIES[op.q]!, threshold: 0, limit: 100 });
      expect(res.status, res.raw).toBe(200);
      logQuery(s, QUERIES[op.q]!);
      expectAll(res.body.data.results.map((r: Json) => r.id), s, what);
      expect(res.body.data.total, what).toBe(s.memories.size);
      return;
    }
    case 'topic.create': {
      const name = TOPIC_NAMES[op.name]!;
      const parentId = op.parent ? pickTopic(ctx, op.parent) ?? null : null;
      const res = await call(app, 'POST', '/api/v1/topics', k, { name, ...(parentId ? { parent_id: parentId } : {}) });
      if (parentId && !s.topics.has(parentId)) {
        expect(res.status, `${what}: another scope's parent: ${res.raw}`).toBe(400);
        return;
      }
      if ([...s.topics.values()].some((x) => x.name === name && x.parentId === parentId)) {
        expect(res.status, res.raw).toBe(409);
        return;
      }
      expect(res.status, res.raw).toBe(201);
      s.topics.set(res.body.data.id as string, { name, parentId });
      return;
    }
    case 'topic.list': {
      const res = await call(app, 'GET', '/api/v1/topics?limit=100', k);
      expect(res.status, res.raw).toBe(200);
      expect(sorted(res.body.data.map((x: Json) => x.id)), what).toEqual(sorted(s.topics.keys()));
      expect(res.body.pagination.total).toBe(s.topics.size);
      return;
    }
    case 'topic.get':
    case 'topic.memories': {
      const id = pickTopic(ctx, op.target);
      if (!id) return;
      const res = await call(app, 'GET', `/api/v1/topics/${id}${op.k === 'topic.memories' ? '/memories?limit=100' : ''}`, k);
      if (!s.topics.has(id)) {
        expect(res.status, `${what}: ${res.raw}`).toBe(404);
        expect(res.body.error.code).toBe('TOPIC_NOT_FOUND');
        return;
      }
      expect(res.status, res.raw).toBe(200);
      if (op.k === 'topic.get') {
        const members = [...s.memories.values()].filter((m) => m.topicId === id);
        const topic = s.topics.get(id)!;
        expect(res.body.data).toMatchObject({ id, name: topic.name, parent_id: topic.parentId, memory_count: members.length });
      } else {
        const members = [...s.memories.values()].filter((m) => m.topicId === id).map((m) => m.id);
        expect(sorted(res.body.data.map((m: Json) => m.id)), what).toEqual(sorted(members));
      }
      return;
    }
    case 'g2.create': {
      let cid: string | undefined;
      if (typeof op.cid === 'string') cid = op.cid;
      else if (op.cid) {
        const of = pickMemory(ctx, op.cid.of);
        if (of) cid = op.cid.form === 'uuid' ? of.id : op.cid.form === 'mem' ? `mem_${of.id}` : of.id.slice(0, 8);
      }
      const text = CONTENTS[op.c]!;
      const res = await call(app, 'POST', '/api/v1/memory', b, { ...(cid ? { id: cid } : {}), text, metadata: { tags: op.tags, source: 'iso' } });
      if (cid && [...s.memories.values()].some((m) => m.clientId === cid)) {
        expect(res.status, `${what} ${cid}: ${res.raw}`).toBe(409);
        expect(res.body.error).toBe('CONFLICT');
        return;
      }
      expect(res.status, `${what} ${cid}: ${res.raw}`).toBe(201);
      let id: string;
      if (cid) {
        expect(res.body.id).toBe(cid);
        id = (await t.container.storage.memories.findByClientId({ tenantId: me.tenant, mode: me.mode, workspace: me.workspace }, cid))!.id;
      } else {
        id = (res.body.id as string).replace(/^mem_/, '');
      }
      addMemory(s, { id, clientId: cid ?? null, title: text, content: text, tags: op.tags, topicId: null }, true);
      return;
    }
    case 'g2.get':
    case 'g2.update':
    case 'g2.delete': {
      const target = pickMemory(ctx, op.target);
      if (!target) return;
      const sent = op.form === 'client' ? legacyIdOf(target) : op.form === 'mem' ? `mem_${target.id}` : op.form === 'uuid' ? target.id : target.id.toUpperCase();
      const url = `/api/v1/memory/${encodeURIComponent(sent)}`;
      const text = op.k === 'g2.update' ? CONTENTS[op.c]! : '';
      const res = op.k === 'g2.get' ? await call(app, 'GET', url, b)
        : op.k === 'g2.update' ? await call(app, 'PUT', url, b, { text }) : await call(app, 'DELETE', url, b);
      expectOnlyOwnUuids(res.raw, s, what);
      const found = resolveLegacy(s, sent);
      if (!found) {
        expect(res.status, `${what} ${sent}: ${res.raw}`).toBe(404);
        expect(res.body.error).toBe('NOT_FOUND');
        return;
      }
      expect(res.status, `${what} ${sent}: ${res.raw}`).toBe(200);
      if (op.k === 'g2.get') {
        expect(res.body).toMatchObject({ id: legacyIdOf(found), text: found.content });
        expect(res.body.metadata.tags).toEqual(found.tags);
      } else if (op.k === 'g2.update') {
        expect(res.body.id).toBe(legacyIdOf(found));
        // A changed text re-derives the title; the same text is no change at all.
        if (text !== found.content) {
          found.content = text;
          found.title = text;
        }
      } else {
        expect(res.body.deleted_id).toBe(legacyIdOf(found));
        s.memories.delete(found.id);
      }
      return;
    }
    case 'g3.search': {
      const res = await call(app, 'POST', '/api/v1/search', b, { query: QUERIES[op.q]!, threshold: 0, topK: 100 });
      expect(res.status, res.raw).toBe(200);
      logQuery(s, QUERIES[op.q]!);
      expectAll(res.body.matches.map((m: Json) => m.id), s, what);
      expect(res.body.total).toBe(s.memories.size);
      return;
    }
    case 'g3.hybrid': {
      const res = await call(app, 'POST', '/api/v1/search/hybrid', b, { query: QUERIES[op.q]!, threshold: 0, topK: 100, rerank: op.rerank });
      expect(res.status, res.raw).toBe(200);
      logQuery(s, QUERIES[op.q]!);
      expectAll(res.body.matches.map((m: Json) => m.id), s, what);
      expect(res.body.keyword_results).toBeLessThanOrEqual(s.memories.size);
      return;
    }
    case 'g3.batch': {
      const res = await call(app, 'POST', '/api/v1/search/batch', b, { searches: op.qs.map((q) => ({ query: QUERIES[q]!, threshold: 0, topK: 100 })) });
      expect(res.status, res.raw).toBe(200);
      for (const q of op.qs) logQuery(s, QUERIES[q]!);
      for (const r of res.body.results as Json[]) expectAll(r.matches.map((m: Json) => m.id), s, what);
      return;
    }
    case 'g4.search':
    case 'g4.searchWithBody': {
      const url = `/v1/search?q=${encodeURIComponent(QUERIES[op.q]!)}&similarity_threshold=0&limit=50`;
      const res = op.k === 'g4.search' ? await call(app, 'GET', url, b) : await call(app, 'GET', url, b, { metadata_filter: { source: 'iso' } });
      expect(res.status, res.raw).toBe(200);
      logQuery(s, QUERIES[op.q]!);
      const ids = res.body.data.results.map((r: Json) => r.id as string);
      if (op.k === 'g4.search') {
        expectAll(ids, s, what);
        expect(res.body.data.pagination.total).toBe(s.memories.size);
      } else {
        // Seeded rows have no metadata; every memory the API wrote has source "iso".
        expect(sorted(ids), what).toEqual(sorted([...s.memories.keys()].filter((id) => s.created.has(id))));
      }
      return;
    }
    case 'g4.stream': {
      // An SSE answer ends when the server closes it: over a real socket (inject would wait for ever).
      if (!ctx.baseUrl) return;
      const res = await fetch(`${ctx.baseUrl}/v1/search/stream?q=${encodeURIComponent(QUERIES[op.q]!)}&similarity_threshold=0&limit=50`, {
        headers: { ...b, accept: 'text/event-stream' }, signal: AbortSignal.timeout(5000),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      logQuery(s, QUERIES[op.q]!);
      const frames = parseFrames(text).frames;
      expectAll(frames.filter((f) => f.event === 'result').map((f) => f.data!.id as string), s, what);
      expect(frames.find((f) => f.event === 'done')!.data!.total).toBe(s.memories.size);
      return;
    }
    case 'g4.vector': {
      const res = await call(app, 'POST', '/v1/search/vector', b, { vector: paddedHashVector(`${TITLES[op.c]!}\n\n${CONTENTS[op.c]!}`), similarity_threshold: 0, limit: 50 });
      expect(res.status, res.raw).toBe(200);
      expectAll(res.body.data.results.map((r: Json) => r.id), s, what);
      return;
    }
    case 'g4.suggest': {
      const q = op.type === 'query' ? QUERIES[op.q]!.slice(0, 3) : op.type === 'tag' ? TAGS[op.q]!.slice(0, 1) : TITLE_PARTS[op.q]!;
      const res = await call(app, 'GET', `/v1/search/suggestions?q=${encodeURIComponent(q)}&type=${op.type}&limit=20`, b);
      expect(res.status, res.raw).toBe(200);
      const counts = new Map<string, number>();
      const bump = (text: string) => counts.set(text, (counts.get(text) ?? 0) + 1);
      if (op.type === 'query') for (const [text, n] of s.queries) { if (text.startsWith(q)) counts.set(text, n); }
      if (op.type === 'tag') for (const m of s.memories.values()) for (const tag of m.tags) { if (tag.startsWith(q)) bump(tag); }
      if (op.type === 'title') for (const m of s.memories.values()) { if (m.title.toLowerCase().includes(q.toLowerCase())) bump(m.title); }
      const got = (res.body.data.suggestions as Json[]).map((x) => [x.text, x.frequency]).sort();
      expect(got, `${what} ${op.type} ${q}`).toEqual([...counts.entries()].sort());
      return;
    }
    case 'g5.embed': {
      // Stateless: nothing of any scope can show; it must simply work for every actor.
      const res = await call(app, 'POST', '/api/v1/embeddings', b, { input: CONTENTS[0]! });
      expect(res.status, res.raw).toBe(200);
      return;
    }
    case 'g6.batch':
      return applyBatch(ctx, op, me, s, what);
    case 'g9.list': {
      const res = await call(app, 'GET', '/api/v1/webhooks?limit=100', b);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data.webhooks.map((w: Json) => w.id), what).toEqual(ctx.listeners ? [ctx.listeners.g9Hooks[op.a]] : []);
      return;
    }
    case 'g9.get': {
      if (!ctx.listeners) return;
      const res = await call(app, 'GET', `/api/v1/webhooks/${ctx.listeners.g9Hooks[op.from]!}`, b);
      if (op.from === op.a) expect(res.status, res.raw).toBe(200);
      else {
        expect(res.status, `${what} of ${ACTORS[op.from]!.name}: ${res.raw}`).toBe(404);
        expect(res.body.error.code).toBe('WEBHOOK_NOT_FOUND');
      }
      return;
    }
    case 'g10.list': {
      const res = await call(app, 'GET', '/v1/webhooks?limit=100', k);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data.webhooks.map((w: Json) => w.id), what).toEqual(ctx.listeners ? [ctx.listeners.g10Hooks.get(keyOf(me))] : []);
      return;
    }
    case 'g10.get': {
      if (!ctx.listeners) return;
      const other = ACTORS[op.from]!;
      const res = await call(app, 'GET', `/v1/webhooks/${ctx.listeners.g10Hooks.get(keyOf(other))!}`, k);
      if (keyOf(other) === keyOf(me)) expect(res.status, res.raw).toBe(200);
      else {
        expect(res.status, `${what} of ${other.name}: ${res.raw}`).toBe(404);
        expect(res.body.error.code).toBe('WEBHOOK_NOT_FOUND');
      }
      return;
    }
    case 'g10.publish': {
      await publish(ctx, op.a);
      return;
    }
  }
}

/** Publishes a G10 event whose data says who sent it; the model remembers it for that tenant + mode. */
export async function publish(ctx: RunContext, a: number): Promise<void> {
  const me = ctx.actors[a]!;
  const marker = `${me.name}#${ctx.published++}`;
  const res = await call(ctx.t.app, 'POST', '/v1/events', me.apiKeyHeaders, { type: 'transfer.completed', data: { id: 'trf_1', reference: 'REF-1', marker } });
  expect(res.status, res.raw).toBe(201);
  publishedOf(ctx.model, a).add(marker);
}

type BatchOp = Extract<Op, { k: 'g6.batch' }>;

/** A sequential G6 batch: each operation is checked in its slot, in order, as the model moves. */
async function applyBatch(ctx: RunContext, op: BatchOp, me: BoundActor, s: ScopeModel, what: string): Promise<void> {
  const used = ctx.batches.get(me.key) ?? 0;
  if (used >= 9) return; // 10 batch requests a minute per key: never the subject here.
  ctx.batches.set(me.key, used + 1);
  const sent: { id?: string; item: BatchOp['items'][number] }[] = op.items.map((item) => {
    if (item.type === 'create' || item.type === 'search') return { item };
    const target = pickMemory(ctx, item.target);
    return { item, ...(target ? { id: target.id.slice(0, item.len) } : { id: '00000000' }) };
  });
  const operations = sent.map(({ item, id }) => {
    switch (item.type) {
      case 'create': return { type: 'create', data: { content: CONTENTS[item.c]!, ...(item.t === null ? {} : { title: TITLES[item.t]! }), tags: item.tags, metadata: { source: 'iso' } } };
      case 'search': return { type: 'search', query: QUERIES[item.q]!, options: { limit: 100, threshold: 0 } };
      case 'update': return { type: 'update', id, data: { title: TITLES[item.t]! } };
      default: return { type: item.type, id };
    }
  });
  const res = await call(ctx.t.app, 'POST', '/api/v1/batch', me.bearerHeaders, { operations, options: { continue_on_error: true, parallel: false } });
  expect([200, 207], res.raw).toContain(res.status);
  let failures = 0;
  sent.forEach(({ item, id }, i) => {
    const r = res.body.data.operations[i] as Json;
    const at = `${what} [${i}] ${item.type} ${id ?? ''}: ${JSON.stringify(r)}`;
    if (item.type === 'create') {
      expect(r.status, at).toBe('success');
      const title = item.t === null ? CONTENTS[item.c]! : TITLES[item.t]!;
      addMemory(s, { id: r.result.id as string, clientId: null, title, content: CONTENTS[item.c]!, tags: item.tags, topicId: null }, true);
      return;
    }
    if (item.type === 'search') {
      logQuery(s, QUERIES[item.q]!);
      expect(r.status, at).toBe('success');
      expectAll(r.result.results.map((x: Json) => x.id), s, at);
      expect(r.result.total, at).toBe(s.memories.size);
      return;
    }
    const expected = resolveUuid(s, id!);
    if ('missing' in expected || 'ambiguous' in expected) {
      failures++;
      expect(r.status, at).toBe('failed');
      expect(r.error.code, at).toBe('missing' in expected ? 'MEMORY_NOT_FOUND' : 'AMBIGUOUS_ID');
      return;
    }
    expect(r.status, at).toBe('success');
    expect(r.result.id, at).toBe(expected.found.id);
    if (item.type === 'read') expect(r.result.title, at).toBe(expected.found.title);
    if (item.type === 'update') expected.found.title = TITLES[item.t]!;
    if (item.type === 'delete') s.memories.delete(expected.found.id);
  });
  expect(res.status, what).toBe(failures === 0 ? 200 : 207);
  expectOnlyOwnUuids(res.raw, s, what); // after the creates above joined the model
}
