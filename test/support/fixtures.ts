import { randomUUID } from 'node:crypto';
import { ALL_PERMISSIONS, type Principal } from '../../src/core/api-keys/api-key.types.ts';
import type { IngestionJob } from '../../src/core/ingestion/ingestion.types.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';

export const scopeA: Scope = { tenantId: 'tenant-a', mode: 'live', workspace: 'default' };
export const scopeB: Scope = { tenantId: 'tenant-b', mode: 'live', workspace: 'default' };

/**
 * A caller of the scope's tenant and mode for writing through the services directly (seeding): an enterprise key,
 * so its writes count against no quota, under a key id no test key has.
 */
export function actorIn(scope: Scope, userId = 'user-1'): Principal {
  return { keyId: `seed-${userId}`, tenantId: scope.tenantId, userId, tier: 'enterprise', mode: scope.mode, scopes: new Set(ALL_PERMISSIONS), expiresAt: null };
}

let tick = Date.UTC(2026, 0, 1);

/** A memory row ready for a repository, with a fresh id and a strictly increasing created_at. */
export function makeMemory(scope: Scope, overrides: Partial<Memory> = {}): Memory {
  const at = new Date((tick += 1000));
  return {
    id: randomUUID(),
    clientId: null,
    scope,
    title: 'A title',
    content: 'Some content',
    memoryType: 'context',
    tags: [],
    metadata: {},
    topicId: null,
    createdAt: at,
    updatedAt: at,
    createdBy: 'user-1',
    updatedBy: 'user-1',
    accessCount: 0,
    lastAccessed: null,
    validFrom: overrides.createdAt ?? at,
    validUntil: null,
    supersededBy: null,
    version: 1,
    ...overrides,
  };
}

/** A unit vector along one axis, plus a little of another: predictable cosines. */
export function axisVector(dims: number, axis: number, other = -1, weight = 0): Float32Array {
  const v = new Float32Array(dims);
  v[axis] = 1;
  if (other >= 0) v[other] = weight;
  return v;
}

/**
 * A new ingestion job (queued, revision 0) ready for a repository, with a fresh id and a strictly increasing
 * created_at (the memories' clock), holding every kind of value its JSON columns store.
 */
export function makeIngestion(scope: Scope, overrides: Partial<IngestionJob> = {}): IngestionJob {
  const at = new Date((tick += 1000));
  return {
    id: `ing_${randomUUID().replaceAll('-', '')}`,
    scope,
    requestedBy: { keyId: 'key_ingest', userId: 'user-1' },
    mode: 'extract',
    policy: 'review',
    state: 'queued',
    messages: [
      { role: 'user', content: 'We deploy on Fridays, blue/green.', timestamp: new Date(Date.UTC(2026, 0, 1, 9, 30, 0, 125)) },
      { role: 'assistant', content: 'Noted.', timestamp: null },
    ],
    metadata: { source: 'chat', nested: { a: [1, { b: null }] } },
    tags: ['ops'],
    proposals: [],
    error: null,
    usage: { model: null, modelCalls: 0, promptTokens: 0, completionTokens: 0 },
    promptVersion: null,
    attempts: 0,
    revision: 0,
    createdAt: at,
    updatedAt: at,
    finishedAt: null,
    ...overrides,
  };
}
