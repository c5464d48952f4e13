import type {
  IngestionError, IngestionJob, IngestionMode, IngestionPolicy, IngestionState, IngestionUsage, IngestMessage, Proposal,
} from '../../core/ingestion/ingestion.types.ts';
import type { KeyMode } from '../../core/scope.ts';

/**
 * An `ingestions` row as both adapters read it. `T` is how the store returns a time (SQLite: epoch ms, PostgreSQL:
 * Date); `J` how it returns a JSON column (SQLite: text, PostgreSQL: the parsed value of jsonb).
 */
export interface IngestionRow<T, J> {
  id: string; tenant_id: string; mode: string; workspace: string; requested_by_key: string; requested_by_user: string;
  ingest_mode: string; policy: string; state: string; messages: J; metadata: J; tags: J; proposals: J; error: J | null;
  usage: J; prompt_version: string | null; attempts: number; revision: number; lease_token: string | null;
  lease_until: T | null; created_at: T; updated_at: T; finished_at: T | null;
}

/**
 * What the `messages` and `proposals` columns hold: the domain objects with their times as ISO text (a proposal's
 * `forgotten` only when true, as the domain has it).
 */
export interface StoredMessage { role: IngestMessage['role']; content: string; timestamp: string | null }
export type StoredProposal = Omit<Proposal, 'decidedAt'> & { decidedAt: string | null };

/**
 * The JSON columns of a job, as values to serialise: one shape for both stores, so `mnemo migrate` copies them as they
 * are (times inside JSON travel as ISO text, never as a store's native time).
 */
export function ingestionJsonColumns(j: Pick<IngestionJob, 'messages' | 'metadata' | 'tags' | 'proposals' | 'error' | 'usage'>) {
  return {
    messages: j.messages.map((m): StoredMessage => ({ role: m.role, content: m.content, timestamp: m.timestamp?.toISOString() ?? null })),
    metadata: j.metadata,
    tags: j.tags,
    proposals: storedProposals(j.proposals),
    error: j.error,
    usage: j.usage,
  };
}

export const storedProposals = (proposals: readonly Proposal[]): StoredProposal[] =>
  proposals.map((p) => ({ ...p, decidedAt: p.decidedAt?.toISOString() ?? null }));

/** The job of a row; one mapping for both stores (the columns and their meaning are the same). */
export function ingestionFromRow<T, J>(r: IngestionRow<T, J>, toDate: (t: T) => Date, fromJson: (j: J) => unknown): IngestionJob {
  const messages = fromJson(r.messages) as StoredMessage[];
  const proposals = fromJson(r.proposals) as StoredProposal[];
  return {
    id: r.id,
    scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
    requestedBy: { keyId: r.requested_by_key, userId: r.requested_by_user },
    mode: r.ingest_mode as IngestionMode,
    policy: r.policy as IngestionPolicy,
    state: r.state as IngestionState,
    messages: messages.map((m) => ({ role: m.role, content: m.content, timestamp: m.timestamp === null ? null : new Date(m.timestamp) })),
    metadata: fromJson(r.metadata) as Record<string, unknown>,
    tags: fromJson(r.tags) as string[],
    proposals: proposals.map((p) => ({ ...p, decidedAt: p.decidedAt === null ? null : new Date(p.decidedAt) })),
    error: r.error === null ? null : fromJson(r.error) as IngestionError | null,
    usage: fromJson(r.usage) as IngestionUsage,
    promptVersion: r.prompt_version,
    attempts: r.attempts,
    revision: r.revision,
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
    finishedAt: r.finished_at === null ? null : toDate(r.finished_at),
  };
}
