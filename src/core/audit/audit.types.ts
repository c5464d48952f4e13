import type { KeyMode } from '../scope.ts';

/**
 * Whose audit log: one per tenant and key mode, as for secrets (a `mnemo_test_` key acts on, and reads, the
 * sandbox's own log). Each owner's rows form one hash chain (audit.hash.ts).
 */
export interface AuditOwner {
  tenantId: string;
  mode: KeyMode;
}

/** Who acted: the key's user and the key's id (`key_…`), never the key itself; keyId null when no key was used. */
export interface AuditActor {
  userId: string;
  keyId: string | null;
}

export type AuditOutcome = 'success' | 'failure';

/**
 * A little context beside the action (a version read, how many rows a list returned): at most AUDIT_METADATA_MAX_KEYS
 * keys named `[A-Za-z][A-Za-z0-9_]*`, each a short string, a safe integer, a boolean or null. Never a secret's value,
 * a key or a request body: callers put only what they chose to show.
 */
export type AuditMetadata = Record<string, string | number | boolean | null>;

/** What is recorded: everything of a row but its place in the chain. */
export interface AuditEntry {
  /** `aud_…`. */
  id: string;
  owner: AuditOwner;
  timestamp: Date;
  actor: AuditActor;
  /** `family.verb`: `secret.read`, `secret.create`, `audit.export`, … (AUDIT_ACTIONS lists the known ones). */
  action: string;
  /** What was acted on: `secret:<name>`, `secret:*` (the whole list), `audit-log:<id>`, …; `secret` when no valid name was given. */
  resource: string;
  outcome: AuditOutcome;
  /** The status the request was answered with (a surface's HTTP status): kept as given, never interpreted here. */
  status: number;
  /** The caller's address as the server saw it. */
  ip: string | null;
  userAgent: string | null;
  /** The `X-Region` the request named (data residency), when it named a valid one. */
  region: string | null;
  requestId: string | null;
  metadata: AuditMetadata;
}

/** An entry as stored: its place in the owner's chain and the digests that link it (audit.hash.ts). */
export interface AuditRow extends AuditEntry {
  /** 1, 2, 3, … within the owner's chain, without gaps. */
  seq: number;
  /** The hash of the row before it in the chain (GENESIS_HASH for seq 1). */
  prevHash: string;
  /** SHA-256 (hex) of this row's canonical form, which includes prevHash. */
  hash: string;
}

/** Where a chain ends: what a new row links to. */
export interface AuditChainHead {
  seq: number;
  hash: string;
}

/** Which rows a list or an export wants; every part optional. */
export interface AuditFilter {
  /** A user id or a key id (`key_…`): rows whose actor has either. */
  actor?: string;
  /** One action, or every action of a family (`secret.*` is `{ prefix: 'secret.' }`). */
  action?: { exact: string } | { prefix: string };
  /** Exactly this resource. */
  resource?: string;
  /** timestamp >= from. */
  from?: Date;
  /** timestamp < to. */
  to?: Date;
  /** Exactly this region (rows of requests that named a valid `X-Region`). */
  region?: string;
}

export interface AuditListQuery {
  filter: AuditFilter;
  /** `desc`: newest first (lists); `asc`: chain order (exports, verification). */
  order: 'asc' | 'desc';
  /** Rows past this seq in `order` (the previous page's last); null: from the start. */
  afterSeq: number | null;
  limit: number;
}

/** A row's position in the whole store, for walking every chain in turn: owners by (tenantId, mode), then seq. */
export interface AuditPosition {
  tenantId: string;
  mode: KeyMode;
  seq: number;
}
