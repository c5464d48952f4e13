import type { McpApprovalAnswer, McpApprovalStatus, McpOwner, StoredMcpApproval } from './mcp.types.ts';

/** A page of an owner's approvals, newest first (requestedAt, then id, descending). */
export interface McpApprovalListQuery {
  /** The status as it reads at `now` (a pending approval past its expiresAt is `expired`); absent: all. */
  status?: McpApprovalStatus;
  /** Exactly this URI, as asked for. */
  resource?: string;
  /** Asked for by this user only (the MCP server looks up the caller's own approvals). */
  requestedBy?: string;
  limit: number;
  /** The last approval of the previous page; null: from the newest. */
  after: { requestedAt: Date; id: string } | null;
  now: Date;
}

/** Storage port of MCP approvals; every read and write is scoped to one owner. */
export interface McpApprovalRepository {
  /**
   * Stores a new approval (pending, or already approved by auto-approval). At most one pending approval per owner,
   * requester and resource is live at a time, also across connections and nodes: in one transaction, the
   * requester's pending approvals of that resource past their expiresAt at `now` are marked `expired`, then the new
   * one is inserted; when a live pending one remains, nothing is written and DomainError CONFLICT is thrown, with
   * details.approvalId naming it.
   */
  insert(approval: StoredMcpApproval, now: Date): Promise<void>;
  find(owner: McpOwner, id: string): Promise<StoredMcpApproval | null>;
  /** The owner's approval that issued the access token of this digest; null when none did. */
  findByTokenDigest(owner: McpOwner, digest: string): Promise<StoredMcpApproval | null>;
  /**
   * Answers the approval in one conditional write: only while it is pending and `answer.respondedAt` is before its
   * expiresAt. Returns the approval as stored after it, or null when it was not (another answer came first, it
   * expired, or the owner has no such approval): of two concurrent answers exactly one is stored.
   */
  respond(owner: McpOwner, id: string, answer: McpApprovalAnswer): Promise<StoredMcpApproval | null>;
  /** Marks the approval `expired` if it is still pending past its expiresAt at `now`; returns it as stored after (null: none). */
  expire(owner: McpOwner, id: string, now: Date): Promise<StoredMcpApproval | null>;
  /** `total` counts every match (all pages). */
  list(owner: McpOwner, query: McpApprovalListQuery): Promise<{ items: StoredMcpApproval[]; total: number }>;
}
