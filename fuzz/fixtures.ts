import type { Operation } from './openapi.ts';
import type { Transport } from './transport.ts';

/** Keys made by whoever hosts the server (a test, or fuzz/target.ts). */
export interface FuzzKeys {
  /** Enterprise keys of the fuzz tenant with every scope. */
  pool: string[];
  /** A free-tier key of the fuzz tenant. */
  free: string;
  /** A fuzz-tenant key with memories:read only. */
  readOnly: string;
  /** The control tenant's key: never used by a case, only to build and check the control data. */
  control: string;
}

/** Existing ids the cases aim at, by path prefix; the control tenant's ids are among them (they must stay out of reach). */
export interface FixtureIds {
  byPrefix: [prefix: string, ids: string[]][];
  /** `secret`: the value of the control tenant's G11 secret, which no answer to the fuzz tenant may show. */
  control: { g1: string[]; g2: string[]; secret?: string };
}

const TIMEOUT_MS = 10_000;

async function call(send: Transport, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const a = await send({
    method, url, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }, TIMEOUT_MS);
  if (a.status >= 300) throw new Error(`fixture ${method} ${url}: ${a.status} ${a.body.slice(0, 300)}`);
  return JSON.parse(a.body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The same small data set for a tenant: G1 and G2 memories, a topic, a G9 and a G10 webhook, a G11 secret. */
async function seedTenant(send: Transport, key: string, label: string) {
  const apiKey = { 'x-api-key': key };
  const bearer = { authorization: `Bearer ${key}` };
  const g1: string[] = [];
  for (let i = 0; i < 3; i++) {
    const m = await call(send, 'POST', '/api/v1/memories', apiKey, {
      title: `${label} memory ${i}`, content: `${label} deploy notes number ${i}`, tags: [label, `t${i}`],
      metadata: { source: { kind: 'web', depth: { level: i } }, env: 'prod', n: i }, memory_type: 'project',
    });
    g1.push(m.data.id as string);
  }
  const g2a = await call(send, 'POST', '/api/v1/memory', bearer, { id: `${label}-note-1`, text: `${label} meeting notes\nrelease plan`, metadata: { tags: ['ops'], team: 'a' } });
  const g2b = await call(send, 'POST', '/api/v1/memory', bearer, { text: `${label} second note` });
  const topic = await call(send, 'POST', '/api/v1/topics', apiKey, { name: `${label} topic`, description: 'fuzz fixture' });
  const g9 = await call(send, 'POST', '/api/v1/webhooks', bearer, { url: 'https://example.com/hook', events: ['memory.created'] });
  const g10 = await call(send, 'POST', '/v1/webhooks', apiKey, { url: 'https://example.com/hook', events: ['transfer.completed'] });
  const secret = { name: `${label}.db`, value: `${label}-secret-value-5f1c0d` };
  await call(send, 'POST', '/v1/security/secrets', bearer, secret);
  return { g1, g2: [g2a.id as string, g2b.id as string], topic: topic.data.id as string, g9: g9.data.id as string, g10: g10.data.id as string, secret };
}

export async function seedFixtures(send: Transport, keys: FuzzKeys): Promise<FixtureIds> {
  const control = await seedTenant(send, keys.control, 'control');
  const fuzz = await seedTenant(send, keys.pool[0]!, 'fuzz');
  const both = (f: (t: typeof fuzz) => string[]) => [...f(fuzz), ...f(control)];
  return {
    byPrefix: [
      ['/api/v1/memories', both((t) => [...t.g1, t.g1[0]!.slice(0, 8)])],
      ['/api/v1/topics', both((t) => [t.topic])],
      ['/api/v1/memory', both((t) => [...t.g2, `mem_${t.g1[0]!}`])],
      ['/api/v1/webhooks', both((t) => [t.g9])],
      ['/v1/webhooks', both((t) => [t.g10])],
      ['/v1/security/secrets', both((t) => [t.secret.name])],
    ],
    control: { g1: control.g1, g2: control.g2, secret: control.secret.value },
  };
}

/** Existing ids for an operation's path, plus a fresh UUID. */
export function pathValuesFor(ids: FixtureIds, op: Operation): string[] {
  const found = ids.byPrefix.find(([prefix]) => op.path.startsWith(prefix))?.[1] ?? [];
  return [...found, 'f0f0f0f0-0000-4000-8000-000000000000'];
}

/** Fields that reading a memory changes on purpose. */
const ACCESS_FIELDS = new Set(['access_count', 'last_accessed', 'accessCount', 'lastAccessed']);
const VOLATILE = new Set(['request_id', 'timestamp', 'meta', 'metadata_generated_at']);

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !ACCESS_FIELDS.has(k) && !VOLATILE.has(k)).map(([k, v]) => [k, stable(v)]));
  }
  return value;
}

/** The control tenant's data as G1 list and G2 get show it (and its topics, webhooks and secrets), for a before/after check. */
export async function controlSnapshot(send: Transport, keys: FuzzKeys, ids: FixtureIds): Promise<unknown> {
  const apiKey = { 'x-api-key': keys.control };
  const bearer = { authorization: `Bearer ${keys.control}` };
  const list = await call(send, 'GET', '/api/v1/memories?limit=100', apiKey);
  const g2 = [];
  for (const id of [...ids.control.g2, ...ids.control.g1.map((u) => `mem_${u}`)]) {
    g2.push(await call(send, 'GET', `/api/v1/memory/${encodeURIComponent(id)}`, bearer));
  }
  const topics = await call(send, 'GET', '/api/v1/topics?limit=100', apiKey);
  const g9 = await call(send, 'GET', '/api/v1/webhooks?limit=100', bearer);
  const g10 = await call(send, 'GET', '/v1/webhooks?limit=100', apiKey);
  const secrets = await call(send, 'GET', '/v1/security/secrets?limit=100', bearer);
  return stable({ g1List: list, g2Get: g2, topics, g9, g10, secrets });
}
