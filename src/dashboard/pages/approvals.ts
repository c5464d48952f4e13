import type { Principal } from '../../core/api-keys/api-key.types.ts';
import { validationError } from '../../core/errors.ts';
import type { McpApprovalView } from '../../core/mcp-access/mcp-approval.service.ts';
import type { McpResourceService, McpResourceView } from '../../core/mcp-access/mcp-resource.service.ts';
import { governingCandidates, parseMcpUri } from '../../core/mcp-access/mcp-uri.ts';
import { MCP_APPROVAL_STATUSES } from '../../core/mcp-access/mcp.types.ts';
import { audited } from '../audit-trail.ts';
import { field, param, signedIn } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';

const PAGE_SIZE = 25;

const statusBadge = (status: string): SafeHtml => html`<span class="status status-${status}">${status}</span>`;

/** The expiry as text now, and a live countdown while pending (assets/dashboard.js). */
const expiry = (a: McpApprovalView, now: Date): SafeHtml => {
  if (a.status !== 'pending') return html`${dateTime(a.expiresAt)}`;
  const s = Math.max(0, Math.floor((a.expiresAt.getTime() - now.getTime()) / 1000));
  return html`<span class="countdown" data-expires="${a.expiresAt.toISOString()}">expires in ${Math.floor(s / 3600) > 0 ? `${Math.floor(s / 3600)}h ` : ''}${Math.floor((s % 3600) / 60)}m ${s % 60}s</span>`;
};

/** Every registration of the owner (paged through): the approvers of a request come from the one governing it. */
async function registrations(resources: McpResourceService, caller: Principal): Promise<McpResourceView[]> {
  const all: McpResourceView[] = [];
  for (let cursor: string | null = null; ;) {
    const page: { items: McpResourceView[]; nextCursor: string | null } = await resources.list(caller, { limit: 100, cursor });
    all.push(...page.items);
    if (page.nextCursor === null) return all;
    cursor = page.nextCursor;
  }
}

/** The registration governing a request's URI (the most specific registered, as core/mcp-access/governing.ts decides). */
function governing(all: readonly McpResourceView[], uriText: string): McpResourceView | null {
  const uri = parseMcpUri(uriText);
  if (uri === null) return null;
  for (const candidate of governingCandidates(uri)) {
    const found = all.find((r) => r.uri === candidate);
    if (found) return found;
  }
  return null;
}

/**
 * Why this viewer cannot answer (null: they can). The service decides again when they answer; this only explains
 * up front, with the same rules: pending, a listed approver of the governing registration, not their own request.
 */
function whyReadOnly(a: McpApprovalView, registration: McpResourceView | null, userId: string): string | null {
  if (a.status === 'expired') return `This request expired at ${a.expiresAt.toISOString()} without an answer; it can no longer be answered.`;
  if (a.status !== 'pending') return `This request was already ${a.status}${a.respondedBy ? ` by ${a.respondedBy}` : ''}.`;
  if (!registration) return 'No MCP resource governs this URI any more, so nobody can answer it.';
  if (!registration.approvers.includes(userId)) {
    return `You (${userId}) are not a listed approver of ${registration.uri}. Its approvers: ${registration.approvers.join(', ') || 'none'}.`;
  }
  if (a.requestedBy === userId) return 'You cannot answer a request of your own.';
  return null;
}

function details(a: McpApprovalView, now: Date): SafeHtml {
  return html`<dl class="card">
<dt>Request</dt><dd><code>${a.operation}</code> on <code>${a.resource}</code></dd>
<dt>Requester</dt><dd>${a.requestedBy}</dd>
<dt>Reason</dt><dd>${a.reason}</dd>
<dt>Status</dt><dd>${statusBadge(a.status)}${a.autoApproved ? ' (auto-approved)' : ''}</dd>
<dt>Requested</dt><dd>${dateTime(a.requestedAt)}</dd>
<dt>Expiry</dt><dd>${expiry(a, now)} <span class="muted">(${a.expiresAt.toISOString()})</span></dd>
${a.respondedBy ? html`<dt>Answered</dt><dd>${a.respondedBy}, ${dateTime(a.respondedAt)}${a.responseReason ? html`: ${a.responseReason}` : ''}</dd>` : ''}
</dl>`;
}

export const approvalRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/approvals`;

  app.get(base, signedIn(deps, 'mcp.approval_list', async (req, _reply, viewer) => {
    const status = param(req, 'status') ?? 'pending';
    const cursor = param(req, 'cursor') ?? null;
    const listed = await deps.mcpApprovals.list(viewer.principal, { status: status === 'all' ? undefined : status, limit: PAGE_SIZE, cursor });
    const now = deps.clock.now();
    return page('Approvals', viewer.chrome('approvals'), html`
<form class="filters" method="get" action="${base}"><label>Status <select name="status">
${['all', ...MCP_APPROVAL_STATUSES].map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}
</select></label><button>Show</button></form>
<p class="muted">${listed.total} ${status === 'all' ? '' : status} request(s) of MCP clients in this tenant (${viewer.principal.mode}).</p>
<div class="table-scroll"><table id="approvals"><thead><tr><th>Request</th><th>Resource</th><th>Requester</th><th>Reason</th><th>Status</th><th>Expiry</th></tr></thead><tbody>
${listed.items.map((a) => html`<tr><td><a href="${base}/${a.id}">${a.id}</a></td><td><code>${a.operation}</code> ${a.resource}</td>
<td>${a.requestedBy}</td><td>${a.reason}</td><td>${statusBadge(a.status)}</td><td>${expiry(a, now)}</td></tr>`)}
</tbody></table></div>
${listed.items.length === 0 ? html`<p class="muted">Nothing here.</p>` : ''}
${listed.nextCursor ? html`<p><a href="${base}${query({ status, cursor: listed.nextCursor })}">Older</a></p>` : ''}`);
  }));

  app.get<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'mcp.approval_read', async (req, _reply, viewer) => {
    const { id } = req.params as { id: string };
    const approval = await deps.mcpApprovals.get(viewer.principal, id);
    const registration = governing(await registrations(deps.mcpResources, viewer.principal), approval.resource);
    const why = whyReadOnly(approval, registration, viewer.principal.userId);
    const now = deps.clock.now();
    return page(`Approval ${approval.id}`, viewer.chrome('approvals'), html`
${details(approval, now)}
${why === null ? html`
<form method="post" action="${base}/${approval.id}" class="card" id="answer">${csrfField(viewer.session.csrfToken)}
  <p><label>Reason (optional, kept with the answer) <textarea name="reason" maxlength="500"></textarea></label></p>
  <button name="action" value="approve" id="approve" data-disable-on-expiry>Approve</button>
  <button name="action" value="deny" id="deny" data-disable-on-expiry>Deny</button>
</form>` : html`<p class="notice" id="read-only">${why}</p>`}
<p><a href="${base}">All approvals</a></p>`);
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id`, signedIn(deps, 'mcp.respond', async (req, reply, viewer) => {
    const { id } = req.params as { id: string };
    const action = field(req, 'action');
    if (action !== 'approve' && action !== 'deny') {
      throw validationError([{ field: 'action', reason: 'invalid_value', message: 'must be approve or deny' }]);
    }
    const reason = field(req, 'reason')?.trim() || undefined;
    const resource = /^appr_[A-Za-z0-9]{1,60}$/.test(id) ? `mcp-approval:${id}` : 'mcp-approval';
    // The G11 respond path: the service checks approver, requester, expiry and races; the audit row is mcp.respond.
    const issued = await audited(deps.operations, req, viewer, { operation: 'mcp.respond', resource, metadata: { approvalId: id, action } },
      () => deps.mcpApprovals.respond(viewer.principal, id, { action, reason }));
    const a = issued.approval;
    reply.header('Cache-Control', 'no-store');
    return page(`Approval ${a.id} ${a.status}`, viewer.chrome('approvals'), html`
${issued.accessToken === null ? html`<p class="notice">You denied this request. ${a.requestedBy} will see it as denied.</p>` : html`
<div class="card"><p id="mcp-hand-off"><strong>Nothing to hand over to an MCP client.</strong> ${a.requestedBy} may now
<code>${a.operation}</code> <code>${a.resource}</code> until ${a.expiresAt.toISOString()}: an AI tool reading it through
Mnemo's MCP server finds this approval by itself and needs no token.</p>
<p>Only a client calling the HTTP API directly (<code>GET /v1/security/mcp/resources/…</code>) needs this token, as the
<code>X-MCP-Access-Token</code> header. It is shown once: it is not stored, only its digest.</p>
<p class="token" id="access-token">${issued.accessToken}</p></div>`}
${details(a, deps.clock.now())}
<p><a href="${base}">All approvals</a></p>`);
  }));
};
