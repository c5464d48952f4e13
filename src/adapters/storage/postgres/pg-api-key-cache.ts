import type { ApiKeyRecord } from '../../../core/api-keys/api-key.types.ts';

/** Entries kept at most; past it the oldest stored is dropped (a lookup then reads the database again). */
export const API_KEY_CACHE_MAX = 10_000;

/**
 * A node's API keys by digest, so that authenticating a request reads no database (PostgreSQL only: SQLite reads its
 * file in process). It serves only while `enabled`, i.e. while the node listens for other nodes' key changes
 * (pg-api-key-listener.ts); `disable` empties it. Every eviction bumps a generation, and a lookup stores its row only
 * if no eviction happened since it started: a row read before a change committed is never kept after the change's
 * eviction. Expiry is not cached: the service compares `expiresAt` with its clock on every request.
 */
export class ApiKeyCache {
  private readonly byDigest = new Map<string, ApiKeyRecord>();
  private readonly digestById = new Map<string, string>();
  private generation = 0;
  private serving = false;

  constructor(private readonly max = API_KEY_CACHE_MAX) {}

  get enabled(): boolean {
    return this.serving;
  }

  /** A copy of the cached record (callers may not change the cache through it), or undefined. */
  get(digest: string): ApiKeyRecord | undefined {
    if (!this.serving) return undefined;
    const hit = this.byDigest.get(digest);
    return hit ? { ...hit, scopes: [...hit.scopes] } : undefined;
  }

  /** A token to take before reading the database, for {@link store}. */
  begin(): number {
    return this.generation;
  }

  /** Keeps `record`, read after `begin` returned `token`, unless an eviction came in between or the cache is off. */
  store(token: number, record: ApiKeyRecord): void {
    if (!this.serving || token !== this.generation) return;
    if (!this.byDigest.has(record.digest) && this.byDigest.size >= this.max) {
      const oldest = this.byDigest.keys().next().value as string;
      this.dropDigest(oldest);
    }
    this.byDigest.set(record.digest, { ...record, scopes: [...record.scopes] });
    this.digestById.set(record.id, record.digest);
  }

  /** The key `id` changed (revoked, rotated, renamed, re-scoped, deleted): forgotten now. */
  evict(id: string): void {
    this.generation++;
    const digest = this.digestById.get(id);
    if (digest !== undefined) this.dropDigest(digest);
  }

  /** Every key forgotten (a table-wide change), the cache serving on. */
  evictAll(): void {
    this.generation++;
    this.byDigest.clear();
    this.digestById.clear();
  }

  /** Serves from now on (the node listens again): empty, so nothing missed meanwhile can be served. */
  enable(): void {
    this.evictAll();
    this.serving = true;
  }

  /** Emptied and bypassed: the node no longer hears other nodes' changes. */
  disable(): void {
    this.serving = false;
    this.evictAll();
  }

  get size(): number {
    return this.byDigest.size;
  }

  private dropDigest(digest: string): void {
    const record = this.byDigest.get(digest);
    this.byDigest.delete(digest);
    if (record) this.digestById.delete(record.id);
  }
}
