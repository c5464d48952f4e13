import type { FastifyRequest } from 'fastify';
import { parseMcpUri } from '../../core/mcp-access/mcp-uri.ts';
import type { McpResourceInput, McpResourceView } from '../../core/mcp-access/mcp-resource.service.ts';
import { MCP_OPERATIONS } from '../../core/mcp-access/mcp.types.ts';
import { TIME_WINDOW_RULE } from '../../core/mcp-access/time-window.ts';
import { audited } from '../audit-trail.ts';
import { field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { fields, listOf, orShowRefusal } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { may } from '../permissions.ts';

/**
 * MCP resources (docs/dashboard.md, "Managing"): the registrations of the signed-in key's tenant and mode, and
 * registering one through McpResourceService.register as the audited operation mcp.register, as G11's POST
 * /v1/security/mcp/resources does. Editing and deleting a registration have no core operation yet (nor a REST route).
 */
const base = `${DASHBOARD_PREFIX}/mcp-resources`;
const PAGE_SIZE = 50;
/** `mcp:<uri>`, as G11's and MCP's audit rows name a resource, or `mcp` for a text that is not a URI. */
const auditResource = (uri: string): string => (parseMcpUri(uri) !== null ? `mcp:${uri}` : 'mcp');

interface Typed { uri: string; name: string; description: string; approvers: string; timeWindow: string; requesters: string }

const typedOf = (req: FastifyRequest): Typed => ({
  uri: field(req, 'uri')?.trim() ?? '', name: field(req, 'name') ?? '', description: field(req, 'description') ?? '',
  approvers: field(req, 'approvers') ?? '', timeWindow: field(req, 'time_window') ?? '', requesters: field(req, 'requesters') ?? '',
});

const row = (r: McpResourceView): SafeHtml => html`<tr data-uri="${r.uri}"><td><code>${r.uri}</code></td><td>${r.name}</td><td>${r.type}</td>
<td>${r.permissions.join(', ')}</td><td>${r.requiresApproval ? r.approvers.join(', ') : html`<span class="muted">no approval needed</span>`}</td>
<td>${r.autoApprove.enabled ? html`on${r.autoApprove.conditions.timeWindow ? ` · ${r.autoApprove.conditions.timeWindow}` : ''}${r.autoApprove.conditions.requester ? ` · for ${r.autoApprove.conditions.requester.join(', ')}` : ''}` : 'off'}</td>
<td>${dateTime(r.createdAt)} by ${r.createdBy}</td></tr>`;

async function listPage(deps: PageDeps, req: FastifyRequest, viewer: Viewer, typed: Typed | null, refusal: SafeHtml | null = null): Promise<SafeHtml> {
  const cursor = param(req, 'cursor') ?? null;
  const listed = await audited(deps.operations, req, viewer, { operation: 'mcp.list', resource: 'mcp:*' },
    () => deps.mcpResources.list(viewer.principal, { limit: PAGE_SIZE, cursor }), (p) => ({ returned: p.items.length }));
  const v = typed ?? { uri: '', name: '', description: '', approvers: viewer.principal.userId, timeWindow: '', requesters: '' };
  const registered = param(req, 'registered');
  return page('MCP resources', viewer.chrome('mcp-resources'), html`${refusal}
${registered && parseMcpUri(registered) ? html`<p class="notice" id="registered">Registered ${registered}.</p>` : ''}
<p class="muted">${listed.total} registration(s) of tenant ${viewer.principal.tenantId} (${viewer.principal.mode}): the access paths of MCP clients
to secrets, API key records and custom values. A request for a URI is governed by the most specific registration.</p>
<div class="table-scroll"><table id="mcp-resources"><thead><tr><th>URI</th><th>Name</th><th>Type</th><th>Operations</th><th>Approvers</th><th>Auto-approve</th><th>Registered</th></tr></thead><tbody>
${listed.items.map(row)}</tbody></table></div>
${listed.nextCursor ? html`<p><a href="${base}${query({ cursor: listed.nextCursor })}">More</a></p>` : ''}
${may('mcp.register', viewer.principal) ? html`<form method="post" action="${base}" class="card" id="register-form">${csrfField(viewer.session.csrfToken)}
  <h2>Register a resource</h2>
  <p><label>URI <input type="text" name="uri" value="${v.uri}" required placeholder="svc://secrets/prod/*"></label>
  <label>Name <input type="text" name="name" value="${v.name}" required></label></p>
  <p><label>Description <input type="text" name="description" value="${v.description}" size="60"></label></p>
  <fieldset><legend>Operations</legend>${MCP_OPERATIONS.map((o) => html`<label class="check"><input type="checkbox" name="permissions" value="${o}"${o === 'read' ? html` checked` : ''}> ${o}</label> `)}</fieldset>
  <p><label class="check"><input type="checkbox" name="requires_approval" value="1" checked> Requires a person's approval</label>
  <label>Approvers (user ids, comma separated) <input type="text" name="approvers" value="${v.approvers}"></label></p>
  <fieldset><legend>Auto-approve</legend>
  <label class="check"><input type="checkbox" name="auto_approve" value="1"> Approve by itself when the conditions hold</label>
  <label>Time window <input type="text" name="time_window" value="${v.timeWindow}" placeholder="09:00-17:00 Europe/London"></label>
  <label>Only for requesters (user ids) <input type="text" name="requesters" value="${v.requesters}"></label>
  <p class="muted">Time window: ${TIME_WINDOW_RULE}.</p></fieldset>
  <p><label>Value (svc://custom/ resources only) <textarea name="value" autocomplete="off" spellcheck="false"></textarea></label></p>
  <button class="primary" id="register">Register</button>
</form>` : ''}`);
}

export const manageMcpResourceRoutes: RouteRegistrar = (app, deps) => {
  app.get(base, signedIn(deps, 'mcp.list', async (req, _reply, viewer) => listPage(deps, req, viewer, null)));

  app.post(base, signedIn(deps, 'mcp.register', async (req, reply, viewer) => {
    const typed = typedOf(req);
    return orShowRefusal(reply, async () => {
      const requesters = listOf(typed.requesters);
      const value = field(req, 'value');
      const input: McpResourceInput = {
        uri: typed.uri, name: typed.name, description: typed.description, permissions: fields(req, 'permissions'),
        requiresApproval: field(req, 'requires_approval') === '1', approvers: listOf(typed.approvers),
        autoApprove: {
          enabled: field(req, 'auto_approve') === '1',
          conditions: { ...(typed.timeWindow.trim() ? { timeWindow: typed.timeWindow } : {}), ...(requesters.length > 0 ? { requester: requesters } : {}) },
        },
        ...(value !== undefined && value !== '' ? { value } : {}),
      };
      const made = await audited(deps.operations, req, viewer, { operation: 'mcp.register', resource: auditResource(typed.uri) },
        () => deps.mcpResources.register(viewer.principal, input), (r) => ({ resourceId: r.id }));
      return new SeeOther(`${base}${query({ registered: made.uri })}`);
    }, (refusal) => listPage(deps, req, viewer, typed, refusal));
  }));
};
