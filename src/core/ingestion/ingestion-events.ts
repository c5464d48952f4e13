import type { Principal } from '../api-keys/api-key.types.ts';
import { isoTimestamp } from '../clock.ts';
import { newEventId } from '../events/memory-events.ts';
import type { NewEvent } from '../events/event.types.ts';
import type { IngestionJob, IngestionState, Proposal } from './ingestion.types.ts';

/** Payloads of ingestion's events (docs/events.md): on the G8 stream and to G9 webhooks, in the job's workspace. */
const scopeOf = (job: IngestionJob) => ({ tenantId: job.scope.tenantId, mode: job.scope.mode, workspace: job.scope.workspace });

/**
 * No text: an event outlives what forgetting scrubs (a proposal's text is the memory's, once written), and a receiver
 * reads the proposals from the job itself (`GET /api/v1/memories/ingest/{id}`).
 */
const proposalFields = (p: Proposal) => ({ id: p.id, action: p.action, supersedes: p.supersedes, status: p.status });

/** Proposals of a job now waiting for a person's review. */
export function ingestionProposed(job: IngestionJob, pending: readonly Proposal[], at: Date): NewEvent {
  return {
    id: newEventId(), type: 'memory.proposed', scope: scopeOf(job), createdAt: at,
    data: {
      object: 'ingestion', id: job.id, workspace: job.scope.workspace, mode: job.mode, requested_by: job.requestedBy.userId,
      proposals: pending.map(proposalFields), created_at: isoTimestamp(at),
    },
  };
}

/** A person's decisions on proposals of a job, as written (approved ones carry their memory's id). */
export function reviewDecided(job: IngestionJob, decided: readonly Proposal[], reviewer: Principal, state: IngestionState, at: Date): NewEvent {
  return {
    id: newEventId(), type: 'memory.review.decided', scope: scopeOf(job), createdAt: at,
    data: {
      object: 'ingestion', id: job.id, workspace: job.scope.workspace, state, decided_by: reviewer.userId,
      decisions: decided.map((p) => ({ proposal: p.id, decision: p.status === 'rejected' ? 'rejected' : 'approved', memory_id: p.memoryId })),
      decided_at: isoTimestamp(at),
    },
  };
}
