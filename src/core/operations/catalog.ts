import type { Permission } from '../api-keys/api-key.types.ts';
import type { AuditAction } from '../audit/audit.rules.ts';

/**
 * The hourly quotas an operation charges beyond the per-request limits (the gateway's, and G11's on the secrets
 * component's requests): core/rate-limit/tier-limits.ts.
 */
export type Quota = 'memory-writes' | 'embeddings' | 'webhook-creations' | 'batches';

/**
 * What an operation needs and leaves behind, whichever surface (REST, MCP, dashboard) runs it:
 * - `permission`: the key permission it needs (null: any valid key; `batch.run` checks each operation it holds);
 * - `audit`: the action it records in the owner's audit log (the secrets component's operations);
 * - `quota`: the limit it charges, through `chargeQuota` (quota.ts) where the work starts, after the input is checked;
 * - `idempotent`: an `Idempotency-Key` replays its first answer (G11's POST and PUT).
 */
export interface OperationPolicy {
  permission: Permission | null;
  audit?: AuditAction;
  quota?: Quota;
  idempotent?: true;
}

const read = { permission: 'memories:read' } as const;
const write = { permission: 'memories:write' } as const;
const memoryWrite = { permission: 'memories:write', quota: 'memory-writes' } as const;
const secretsOp = <A extends AuditAction>(permission: Permission, audit: A, idempotent?: true) =>
  ({ permission, audit, ...(idempotent ? { idempotent } : {}) });

/**
 * Every operation Mnemo offers, named once. Routes declare the one they run (`config.operation`), MCP tools and
 * dashboard actions likewise; test/cross/operations.test.ts fails on any of them that runs none.
 */
export const OPERATIONS = {
  'memory.create': memoryWrite,
  'memory.read': read,
  'memory.list': read,
  'memory.update': memoryWrite,
  'memory.delete': memoryWrite,
  'memory.delete_many': memoryWrite,
  /** Forgetting by filter (memory-forget.ts): a permission of its own, which keys get only when asked for; one write per call. */
  'memory.forget': { permission: 'memories:forget', quota: 'memory-writes' },
  'memory.supersede': memoryWrite,
  'memory.history': read,
  /** A conversation in (docs/ingestion.md): one write charged per request; what it writes is decided later. */
  'memory.ingest': memoryWrite,
  'memory.ingest_read': read,
  /** A person's decisions on an ingestion's proposals: audited, and never by the key that asked (ingestion.service.ts). */
  'memory.ingest_review': { permission: 'memories:write', audit: 'ingestion.review' },
  'memory.stats': read,
  'memory.similar': read,
  'memory.search': read,
  'memory.search_hybrid': read,
  'memory.search_keyword': read,
  'memory.search_batch': read,
  'memory.search_vector': read,
  'memory.suggest': read,
  'memory.search_live': read,
  'topic.create': write,
  'topic.list': read,
  'topic.read': read,
  'topic.update': write,
  'topic.delete': write,
  'topic.memories': read,
  'embedding.create': { permission: null, quota: 'embeddings' },
  'batch.run': { permission: null, quota: 'batches' },
  'analytics.read': read,
  'analytics.stream': read,
  'event.stream': read,
  'event.publish': write,
  'webhook.create': { permission: 'memories:write', quota: 'webhook-creations' },
  'webhook.list': read,
  'webhook.read': read,
  'webhook.update': write,
  'webhook.delete': write,
  'webhook.redeliver': write,
  'secret.create': secretsOp('secrets:write', 'secret.create', true),
  'secret.list': secretsOp('secrets:read', 'secret.list'),
  'secret.read': secretsOp('secrets:read', 'secret.read'),
  'secret.update': secretsOp('secrets:write', 'secret.update', true),
  'secret.delete': secretsOp('secrets:delete', 'secret.delete'),
  'audit.list': secretsOp('audit:read', 'audit.read'),
  'audit.read': secretsOp('audit:read', 'audit.read'),
  'audit.export': secretsOp('audit:read', 'audit.export', true),
  'audit.mcp': secretsOp('audit:read', 'audit.read'),
  'apikey.create': secretsOp('apikeys:manage', 'apikey.create', true),
  'apikey.list': secretsOp('apikeys:manage', 'apikey.list'),
  'apikey.read': secretsOp('apikeys:manage', 'apikey.read'),
  'apikey.update': secretsOp('apikeys:manage', 'apikey.update', true),
  'apikey.revoke': secretsOp('apikeys:manage', 'apikey.revoke'),
  'apikey.rotate': secretsOp('apikeys:manage', 'apikey.rotate', true),
  'security_webhook.create': { ...secretsOp('secrets:write', 'webhook.create', true), quota: 'webhook-creations' },
  'security_webhook.list': secretsOp('secrets:read', 'webhook.list'),
  'security_webhook.read': secretsOp('secrets:read', 'webhook.read'),
  'security_webhook.update': secretsOp('secrets:write', 'webhook.update', true),
  'security_webhook.delete': secretsOp('secrets:write', 'webhook.delete'),
  /** The dashboard's redelivery of a failed delivery (no REST route). */
  'security_webhook.redeliver': { permission: 'secrets:write' },
  'mcp.register': secretsOp('secrets:write', 'mcp.register', true),
  'mcp.update': secretsOp('secrets:write', 'mcp.update', true),
  'mcp.delete': secretsOp('secrets:write', 'mcp.delete'),
  'mcp.list': secretsOp('mcp:access', 'mcp.list'),
  'mcp.read': secretsOp('mcp:access', 'mcp.read'),
  'mcp.request': secretsOp('mcp:access', 'mcp.request', true),
  'mcp.respond': secretsOp('mcp:access', 'mcp.respond', true),
  'mcp.approval_list': secretsOp('mcp:access', 'mcp.approval_list'),
  'mcp.approval_read': secretsOp('mcp:access', 'mcp.approval_read'),
  /**
   * OAuth for remote MCP clients (core/oauth): the consent page, and the Connected apps list and revoke. Any valid key;
   * what it may grant or revoke (never a scope it lacks) and the audit rows are the OAuth service's.
   */
  'oauth.authorize': { permission: null },
  'oauth.grant_list': { permission: null },
  'oauth.grant_revoke': { permission: null },
  /** Signing in and out of the dashboard: any valid key. */
  'session.sign_out': { permission: null },
} as const satisfies Record<string, OperationPolicy>;

export type OperationName = keyof typeof OPERATIONS;

export const isOperationName = (name: unknown): name is OperationName =>
  typeof name === 'string' && Object.hasOwn(OPERATIONS, name);

/**
 * What an entry point (a route, a page) declares it runs: one operation; a list, when its input chooses one of them
 * (it then authorizes that one itself); null, when it runs none (sign-in, static assets).
 */
export type DeclaredOperation = OperationName | readonly OperationName[] | null;

export const isDeclaredOperation = (value: unknown): value is DeclaredOperation =>
  value === null || isOperationName(value) || (Array.isArray(value) && value.length > 0 && value.every(isOperationName));

/**
 * A route-registration check (an `onRoute` hook of the surfaces and the dashboard): a route of `where` that names no
 * operation, or an unknown one, cannot be registered, so no entry point escapes the operations' policy.
 */
export function requireDeclaredOperation(where: string) {
  return (route: { method: string | readonly string[]; url: string; config?: unknown }): void => {
    if (isDeclaredOperation((route.config as { operation?: unknown } | undefined)?.operation)) return;
    throw new Error(`${where}: route ${[route.method].flat().join(',')} ${route.url} names no operation: set config.operation (core/operations/catalog.ts)`);
  };
}

export const policyOf = (name: OperationName): OperationPolicy => OPERATIONS[name];
