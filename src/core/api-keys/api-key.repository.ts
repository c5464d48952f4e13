import type { ApiKeyRecord } from './api-key.types.ts';

/** Storage port for API keys: only digests are stored. */
export interface ApiKeyRepository {
  insert(record: ApiKeyRecord): Promise<void>;
  findByDigest(digest: string): Promise<ApiKeyRecord | null>;
  findById(id: string): Promise<ApiKeyRecord | null>;
  list(tenantId?: string): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; false when no such key or already revoked. */
  revoke(id: string, at: Date): Promise<boolean>;
}
