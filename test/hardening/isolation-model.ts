import { ACTORS, KEY_NAMES, keyOf } from './isolation-world.ts';

/** What one scope (tenant, mode, workspace) should hold, kept by the test beside the server. */
export interface ModelMemory {
  id: string;
  clientId: string | null;
  title: string;
  content: string;
  tags: string[];
  topicId: string | null;
}

export interface ScopeModel {
  memories: Map<string, ModelMemory>;
  /** Every id this scope ever held (deleted ones too): what its streams and webhooks may mention. */
  ever: Map<string, ModelMemory>;
  /** Ids created through the API (each emits memory.created); seeded rows are not. */
  created: Set<string>;
  /** Search log: normalised query -> how often this scope searched it. */
  queries: Map<string, number>;
  /** Topic id -> its name and parent. */
  topics: Map<string, { name: string; parentId: string | null }>;
}

export interface Model {
  scopes: ScopeModel[];
  /** G10 events published per tenant + mode: their markers. */
  published: Map<string, Set<string>>;
  /** Seeded UUIDs so far (kept unique across scopes). */
  seeds: number;
}

export function newModel(): Model {
  return {
    scopes: ACTORS.map(() => ({ memories: new Map(), ever: new Map(), created: new Set(), queries: new Map(), topics: new Map() })),
    published: new Map(KEY_NAMES.map((k) => [k, new Set<string>()])),
    seeds: 0,
  };
}

export function addMemory(s: ScopeModel, m: ModelMemory, viaApi: boolean): void {
  s.memories.set(m.id, m);
  s.ever.set(m.id, m);
  if (viaApi) s.created.add(m.id);
}

export function logQuery(s: ScopeModel, query: string): void {
  const q = query.trim().replace(/\s+/g, ' ').toLowerCase();
  s.queries.set(q, (s.queries.get(q) ?? 0) + 1);
}

/** G1 id resolution inside one scope: a full id or a prefix of at least 8 characters, case-insensitive. */
export function resolveUuid(s: ScopeModel, idOrPrefix: string): { found: ModelMemory } | { missing: true } | { ambiguous: string[] } {
  const p = idOrPrefix.toLowerCase();
  const matches = [...s.memories.keys()].filter((id) => id.startsWith(p));
  if (matches.length === 0) return { missing: true };
  if (matches.length > 1 && !matches.includes(p)) return { ambiguous: matches };
  return { found: s.memories.get(matches.includes(p) ? p : matches[0]!)! };
}

/** G2 id resolution: a client id first (exact), then `mem_<uuid>` or the bare UUID. */
export function resolveLegacy(s: ScopeModel, legacyId: string): ModelMemory | null {
  for (const m of s.memories.values()) if (m.clientId === legacyId) return m;
  const uuid = (legacyId.startsWith('mem_') ? legacyId.slice(4) : legacyId).toLowerCase();
  return s.memories.get(uuid) ?? null;
}

/** The id G2 answers with. */
export const legacyIdOf = (m: ModelMemory): string => m.clientId ?? `mem_${m.id}`;

/** The tenant + mode model of an actor. */
export const publishedOf = (model: Model, actor: number): Set<string> => model.published.get(keyOf(ACTORS[actor]!))!;
