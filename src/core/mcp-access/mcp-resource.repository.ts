import type { SealedRef, SealedValue } from '../secrets/secret.types.ts';
import type { McpOwner, StoredMcpResource } from './mcp.types.ts';

/** A page of an owner's resources, URIs ascending in byte order, after `afterUri` (null: from the first). */
export interface McpResourceListQuery {
  limit: number;
  afterUri: string | null;
}

/**
 * Storage port of MCP resource registrations. Every read is scoped to one owner (another owner's registration
 * answers like a missing one) except `sealedValues`, which master-key rotation walks.
 */
export interface McpResourceRepository {
  /** Stores a new registration; DomainError CONFLICT (details.field `uri`) when the owner has one with that URI. */
  insert(resource: StoredMcpResource): Promise<void>;
  /** The owner's registrations whose URI is one of `uris` (in no particular order). */
  findByUris(owner: McpOwner, uris: readonly string[]): Promise<StoredMcpResource[]>;
  findById(owner: McpOwner, id: string): Promise<StoredMcpResource | null>;
  /** `total` counts all of the owner's registrations. */
  list(owner: McpOwner, query: McpResourceListQuery): Promise<{ items: StoredMcpResource[]; total: number }>;
  /**
   * Replaces the registration's mutable fields (name, description, permissions, requiresApproval, approvers,
   * autoApprove, sealedValue) with `resource`'s; false when the owner has no registration with its id.
   */
  update(resource: StoredMcpResource): Promise<boolean>;
  /**
   * Removes the owner's registration and, in the same transaction, its approvals (pending or answered: they name
   * it and can open nothing once it is gone; the audit log keeps their history); false when there is none with that id.
   */
  delete(owner: McpOwner, id: string): Promise<boolean>;
  /**
   * Counts one successful read through the registration at `at`, in one statement (concurrent reads all count):
   * returns accessedAt and accessCount as they are after it, or null when the owner has no such registration.
   */
  recordAccess(owner: McpOwner, id: string, at: Date): Promise<{ accessedAt: Date; accessCount: number } | null>;
  /** Every sealed custom value of every owner, `limit` at a time after `after` (null: from the start), by id: for rotation. */
  sealedValues(after: string | null, limit: number): Promise<SealedRef[]>;
  /** Replaces the sealed value `ref` (same payload, data key re-wrapped under another master key). */
  rewrap(ref: string, sealed: SealedValue): Promise<void>;
}
