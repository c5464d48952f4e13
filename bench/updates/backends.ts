/**
 * How bench:updates reaches Mnemo. `http` (the default, and what BENCHMARKS.md reports): the real server
 * (dist/app/main.js, as `npm start`) on loopback, written through G1 (`POST /api/v1/memories`, X-API-Key) and searched
 * through G3 (`POST /api/v1/search` semantic, `POST /api/v1/search/hybrid`, Bearer), each with the defaults the
 * served OpenAPI document declares. `core`: the same calls on the core services in process (a development aid
 * while a surface lacks a field; its defaults are the surfaces' documented ones).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnterpriseKey, startServer, type EmbedderKind, type ServerHandle } from '../lib/server.ts';

export type SearchKind = 'hybrid' | 'semantic';
export type Via = 'http' | 'core';

export interface Written {
  id: string;
  /** The creation time the service recorded (G1 `created_at`). */
  createdAt: Date;
}

export interface SearchOptions {
  limit: number;
  asOf?: Date | undefined;
  includeExpired?: boolean | undefined;
  /** Absent: the surface's default (what the bench measures); preflight checks pass 0 to see everything. */
  threshold?: number | undefined;
}

/** The defaults a search ran with, as the surface declares them (null: not declared). */
export interface SearchDefaults {
  semantic: { threshold: number | null };
  hybrid: { threshold: number | null; semanticWeight: number | null; keywordWeight: number | null; rerank: boolean | null };
  /** The request fields this surface declares for validity (null: none found; the bench then sends `as_of` anyway). */
  fields: { asOf: string | null; includeExpired: string | null; supersedes: string | null };
}

export interface Backend {
  via: Via;
  /** The embedding model, as the service names it. */
  modelId: string;
  defaults: SearchDefaults;
  create(workspace: string, memory: { title: string; content: string; supersedes?: string[] | undefined }): Promise<Written>;
  /** Ids of the hits, best first. */
  search(workspace: string, kind: SearchKind, query: string, o: SearchOptions): Promise<string[]>;
  /** The memory as read back (wire fields for http; the same names for core), for the preflight checks. */
  read(workspace: string, id: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON schema properties of a POST body in an OpenAPI document ({} when the path is missing). */
function bodyProperties(doc: Json, path: string): Json {
  const paths = isObject(doc.paths) ? doc.paths : {};
  const op = isObject(paths[path]) && isObject((paths[path] as Json).post) ? (paths[path] as Json).post as Json : {};
  const content = isObject(op.requestBody) && isObject((op.requestBody as Json).content) ? (op.requestBody as Json).content as Json : {};
  const json = isObject(content['application/json']) ? content['application/json'] as Json : {};
  const schema = isObject(json.schema) ? json.schema : {};
  return isObject(schema.properties) ? schema.properties : {};
}

const defaultOf = (props: Json, name: string): unknown => (isObject(props[name]) ? (props[name] as Json).default : undefined);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const fieldOf = (props: Json, ...names: string[]): string | null => names.find((n) => n in props) ?? null;

export const G1_MEMORIES = '/api/v1/memories';
export const G3_SEMANTIC = '/api/v1/search';
export const G3_HYBRID = '/api/v1/search/hybrid';

/** Reads the served OpenAPI document: the search defaults and the names of the validity fields. */
export function defaultsFromOpenApi(doc: Json): SearchDefaults {
  const semantic = bodyProperties(doc, G3_SEMANTIC);
  const hybrid = bodyProperties(doc, G3_HYBRID);
  const create = bodyProperties(doc, G1_MEMORIES);
  const both = (...names: string[]) => {
    const a = fieldOf(semantic, ...names);
    const b = fieldOf(hybrid, ...names);
    return a !== null && a === b ? a : a ?? b;
  };
  return {
    semantic: { threshold: num(defaultOf(semantic, 'threshold')) },
    hybrid: {
      threshold: num(defaultOf(hybrid, 'threshold')), semanticWeight: num(defaultOf(hybrid, 'semanticWeight')),
      keywordWeight: num(defaultOf(hybrid, 'keywordWeight')), rerank: bool(defaultOf(hybrid, 'rerank')),
    },
    fields: { asOf: both('as_of', 'asOf'), includeExpired: both('include_expired', 'includeExpired'), supersedes: fieldOf(create, 'supersedes') },
  };
}

export async function httpBackend(embedder: EmbedderKind): Promise<Backend & { server: ServerHandle }> {
  const server = await startServer(embedder);
  try {
    const key = await createEnterpriseKey(server, embedder);
    const call = async (method: string, path: string, workspace: string | undefined, style: 'x-api-key' | 'bearer', body?: unknown): Promise<Json> => {
      const headers: Record<string, string> = style === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
      if (workspace) headers['x-workspace-id'] = workspace;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (res.status < 200 || res.status > 299) {
        throw new HttpError(`${method} ${path} answered ${res.status}: ${text.slice(0, 600)}`, res.status, text);
      }
      return JSON.parse(text) as Json;
    };
    const openapi = await call('GET', '/openapi.json', undefined, 'x-api-key');
    const defaults = defaultsFromOpenApi(openapi);
    const health = await call('GET', '/health', undefined, 'x-api-key');
    const embeddings = isObject(health.embeddings) ? health.embeddings : {};
    const modelId = typeof embeddings.model === 'string' ? embeddings.model
      : typeof embeddings.model_id === 'string' ? embeddings.model_id : embedder === 'local' ? 'local (default model)' : embedder;
    const asOfField = defaults.fields.asOf ?? 'as_of';
    const includeExpiredField = defaults.fields.includeExpired ?? 'include_expired';

    return {
      via: 'http', server, modelId, defaults,
      async create(workspace, m) {
        const body: Json = { title: m.title, content: m.content };
        if (m.supersedes) body[defaults.fields.supersedes ?? 'supersedes'] = m.supersedes;
        const out = await call('POST', G1_MEMORIES, workspace, 'x-api-key', body);
        const data = isObject(out.data) ? out.data : {};
        const created = String(data.valid_from ?? data.created_at ?? '');
        if (typeof data.id !== 'string' || Number.isNaN(Date.parse(created))) throw new Error(`POST ${G1_MEMORIES}: unexpected answer ${JSON.stringify(out).slice(0, 300)}`);
        return { id: data.id, createdAt: new Date(created) };
      },
      async search(workspace, kind, query, o) {
        const body: Json = { query, topK: o.limit, includeMetadata: false };
        if (o.threshold !== undefined) body.threshold = o.threshold;
        if (o.asOf) body[asOfField] = o.asOf.toISOString();
        if (o.includeExpired) body[includeExpiredField] = true;
        const out = await call('POST', kind === 'hybrid' ? G3_HYBRID : G3_SEMANTIC, workspace, 'bearer', body);
        if (!Array.isArray(out.matches)) throw new Error(`G3 ${kind}: no matches in ${JSON.stringify(out).slice(0, 300)}`);
        return out.matches.map((m) => String((m as Json).id));
      },
      async read(workspace, id) {
        const out = await call('GET', `${G1_MEMORIES}/${id}`, workspace, 'x-api-key');
        return isObject(out.data) ? out.data : {};
      },
      async close() {
        try {
          await server.stop();
        } finally {
          await server.dispose();
        }
      },
    };
  } catch (err) {
    await server.dispose();
    throw err;
  }
}

export class HttpError extends Error {
  constructor(message: string, readonly status: number, readonly body: string) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Core, in process

export async function coreBackend(embedder: EmbedderKind): Promise<Backend> {
  // Imported here so that an HTTP run does not load the core (and its model) into the bench process.
  const { loadConfig } = await import('../../src/app/config.ts');
  const { createContainer } = await import('../../src/app/container.ts');
  const { warmUp } = await import('../../src/app/embedder.factory.ts');
  const { ALL_PERMISSIONS } = await import('../../src/core/api-keys/api-key.types.ts');
  const { RELEVANT_SCORE } = await import('../../src/core/search/score-calibration.ts');
  const { HYBRID_DEFAULT_THRESHOLD } = await import('../../src/core/search/relevance.ts');

  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-updates-'));
  const container = await createContainer(loadConfig({ MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: embedder, MNEMO_LOG_LEVEL: 'silent' }));
  try {
    await warmUp(container.embedder);
    const { key } = await container.apiKeys.create({ tenantId: 'updates', userId: 'bench', tier: 'enterprise', mode: 'live' });
    const principal = await container.apiKeys.authenticate(key);
    const actor = { ...principal, scopes: new Set(ALL_PERMISSIONS) };
    const scope = (workspace: string) => ({ tenantId: principal.tenantId, mode: principal.mode, workspace });
    const weights = { semanticWeight: 0.7, keywordWeight: 0.3, rerank: true };
    return {
      via: 'core', modelId: container.embedder.modelId,
      defaults: {
        semantic: { threshold: RELEVANT_SCORE },
        hybrid: { threshold: HYBRID_DEFAULT_THRESHOLD, ...weights },
        fields: { asOf: 'asOf', includeExpired: 'includeExpired', supersedes: 'supersedes' },
      },
      async create(workspace, m) {
        const memory = await container.memories.create(scope(workspace), actor, { title: m.title, content: m.content, supersedes: m.supersedes });
        return { id: memory.id, createdAt: memory.createdAt };
      },
      async search(workspace, kind, query, o) {
        const ctx = { scope: scope(workspace), userId: 'bench', surface: 'bench' as const };
        const common = { query, limit: o.limit, filter: {}, validity: { asOf: o.asOf, includeExpired: o.includeExpired } };
        const out = kind === 'hybrid'
          ? await container.search.hybrid(ctx, { ...common, ...weights, threshold: o.threshold })
          : await container.search.semantic(ctx, { ...common, threshold: o.threshold ?? RELEVANT_SCORE });
        return out.hits.map((h) => h.memory.id);
      },
      async read(workspace, id) {
        const m = await container.memories.get(scope(workspace), id);
        return { id: m.id, superseded_by: m.supersededBy, valid_from: m.validFrom.toISOString(), valid_until: m.validUntil?.toISOString() ?? null };
      },
      async close() {
        await container.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await container.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
