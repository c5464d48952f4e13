/**
 * What forgetting a memory does to the ingestion jobs that hold its text (docs/ingestion.md, "Forgetting"): the
 * proposal it was written for keeps its id, action, status and `memoryId` but not its content, and the messages it
 * came from (its `sources`) are blanked too. Both stores run this inside the memory's delete transaction
 * (forgetMemoryTraces), on the stored shapes of the `messages` and `proposals` columns.
 */

/** The client id a proposal's memory is written under: a retried write finds it instead of writing it twice. */
export const ingestionClientId = (jobId: string, proposalId: string): string => `ingest:${jobId}:${proposalId}`;

/** The job and proposal a memory was written for, read from its client id; null for any other client id. */
export function ingestionWriteOf(clientId: string | null): { jobId: string; proposalId: string } | null {
  const m = clientId === null ? null : /^ingest:(ing_[^:]+):([^:]+)$/.exec(clientId);
  return m ? { jobId: m[1]!, proposalId: m[2]! } : null;
}

interface ForgettableProposal {
  id: string;
  content: string;
  sources: number[];
  status: string;
  memoryId: string | null;
  forgotten?: boolean;
}

/**
 * The job's proposals and messages once memory `memoryId` is forgotten, or null when it holds nothing of it. A
 * proposal is the memory's when its `memoryId` names it, or when it is `approved` and `written` (from the memory's
 * client id) names it: the write committed but the job was not saved yet — it becomes `applied`, so no later attempt
 * writes it again. A message it came from is blanked even when other proposals came from it too: forgetting wins.
 * Proposals naming the memory only in `supersedes` or `duplicateOf` keep their own text.
 */
export function forgetInJob<P extends ForgettableProposal, M extends { content: string }>(
  proposals: readonly P[], messages: readonly M[], memoryId: string, written: { proposalId: string } | null,
): { proposals: P[]; messages: M[] } | null {
  const blank = new Set<number>();
  let found = false;
  const kept = proposals.map((p): P => {
    const ours = p.memoryId === memoryId || (p.status === 'approved' && p.memoryId === null && written?.proposalId === p.id);
    if (!ours) return p;
    found = true;
    for (const s of p.sources) blank.add(s);
    return { ...p, content: '', status: 'applied', memoryId, forgotten: true };
  });
  if (!found) return null;
  return { proposals: kept, messages: messages.map((m, i) => (blank.has(i) ? { ...m, content: '' } : m)) };
}
