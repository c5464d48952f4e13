import type { NewEvent } from '../events/event.types.ts';
import type { ApiKeyChanges, ApiKeyListQuery, ApiKeyOwner, ApiKeyRecord } from './api-key.types.ts';

/**
 * Storage port for API keys: only digests are stored. `findByDigest`, `findById`, `list` and `revoke` serve
 * authentication and the command line (every tenant); the methods taking an owner serve G11, where another owner's
 * key answers exactly like a missing one.
 */
export interface ApiKeyRepository {
  insert(record: ApiKeyRecord): Promise<void>;
  findByDigest(digest: string): Promise<ApiKeyRecord | null>;
  findById(id: string): Promise<ApiKeyRecord | null>;
  list(tenantId?: string): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; false when no such key or already revoked. */
  revoke(id: string, at: Date): Promise<boolean>;
  /** The owner's key `id`; null when the owner has none (another owner's key included). */
  find(owner: ApiKeyOwner, id: string): Promise<ApiKeyRecord | null>;
  /** The owner's keys, revoked and expired ones too, oldest first (created_at, then id byte-wise); `total` counts all of them. */
  listPage(owner: ApiKeyOwner, query: ApiKeyListQuery): Promise<{ items: ApiKeyRecord[]; total: number }>;
  /** Applies `changes` to the owner's key `id`; returns the key as stored, or null when the owner has none. */
  update(owner: ApiKeyOwner, id: string, changes: ApiKeyChanges): Promise<ApiKeyRecord | null>;
  /**
   * Rotation, in one transaction: when the owner's key `id` is still live at `at` (not revoked, not expired, not
   * replaced), marks it replaced by `replacement.id`, sets its expiry to `oldExpiresAt` (the end of its grace period)
   * and inserts `replacement`, and appends `events` to the event log (with their webhook deliveries, as
   * EventRepository.append stores them). Returns false, writing nothing (no event either), when the key is missing or
   * no longer live: of two concurrent rotations of one key, exactly one succeeds.
   */
  rotate(owner: ApiKeyOwner, id: string, replacement: ApiKeyRecord, oldExpiresAt: Date, at: Date, events?: readonly NewEvent[]): Promise<boolean>;
}
