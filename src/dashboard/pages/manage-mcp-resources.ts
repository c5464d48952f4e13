import type { FastifyRequest } from 'fastify';
import { mcpAuditResource, parseMcpUri } from '../../core/mcp-access/mcp-uri.ts';
import { validationError } from '../../core/errors.ts';
import type { McpResourceChange, McpResourceInput, McpResourceView } from '../../core/mcp-access/mcp-resource.service.ts';
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
 * MCP resources (docs/dashboard.md, "Managing"): the registrations of the signed-in key's tenant and mode;
 * registering, changing and deleting one through McpResourceService as the audited operations mcp.register,
 * mcp.update and mcp.delete, as G11's POST, PUT and DELETE /v1/security/mcp/resources do.
 */
const base = `${DASHBOARD_PREFIX}/mcp-resources`;
const PAGE_SIZE = 50;
/** The form fields a registration and an edit share, from a registration, the defaults, or as posted (a refusal shows them again). */
interface ResourceFields {
  name: string; description: string; permissions: string[]; requiresApproval: boolean; approvers: string;
  autoApprove: boolean; timeWindow: string; requesters: string;
}

const fieldsOf = (r: McpResourceView): ResourceFields => ({
  name: r.name, description: r.description, permissions: r.permissions, requiresApproval: r.requiresApproval, approvers: r.approvers.join(', '),
  autoApprove: r.autoApprove.enabled, timeWindow: r.autoApprove.conditions.timeWindow ?? '', requesters: (r.autoApprove.conditions.requester ?? []).join(', '),
});
const newFields = (viewer: Viewer): ResourceFields => ({
  name: '', description: '', permissions: ['read'], requiresApproval: true, approvers: viewer.principal.userId, autoApprove: false, timeWindow: '', requesters: '',
});
const postedFieldsOf = (req: FastifyRequest): ResourceFields => ({
  name: field(req, 'name') ?? '', description: field(req, 'description') ?? '', permissions: fields(req, 'permissions'),
  requiresApproval: field(req, 'requires_approval') === '1', approvers: field(req, 'approvers') ?? '', autoApprove: field(req, 'auto_approve') === '1',
  timeWindow: field(req, 'time_window') ?? '', requesters: field(req, 'requesters') ?? '',
});

/** What both forms post as McpResourceService's settings; a blank value is no value (an edit keeps the stored one). */
function settingsOf(v: ResourceFields, value: string | undefined) {
  const requesters = listOf(v.requesters);
  return {
    name: v.name, description: v.description, permissions: v.permissions, requiresApproval: v.requiresApproval, approvers: listOf(v.approvers),
    autoApprove: {
      enabled: v.autoApprove,
      conditions: { ...(v.timeWindow.trim() ? { timeWindow: v.timeWindow } : {}), ...(requesters.length > 0 ? { requester: requesters } : {}) },
    },
    ...(value !== undefined && value !== '' ? { value } : {}),
  };
}

const checked = (on: boolean): SafeHtml => (on ? html` checked` : html``);

/** The name, description, operations, approvers and auto-approve fields of both forms. */
const settingsFields = (v: ResourceFields): SafeHtml => html`<p><label>Name <input type="text" name="name" value="${v.name}" required></label>
  <label>Description <input type="text" name="description" value="${v.description}" size="60"></label></p>
  <fieldset><legend>Operations</legend>${MCP_OPERATIONS.map((o) => html`<label class="check"><input type="checkbox" name="permissions" value="${o}"${checked(v.permissions.includes(o))}> ${o}</label> `)}</fieldset>
  <p><label class="check"><input type="checkbox" name="requires_approval" value="1"${checked(v.requiresApproval)}> Requires a person's approval</label>
  <label>Approvers (user ids, comma separated) <input type="text" name="approvers" value="${v.approvers}"></label></p>
  <fieldset><legend>Auto-approve</legend>
  <label class="check"><input type="checkbox" name="auto_approve" value="1"${checked(v.autoApprove)}> Approve by itself when the conditions hold</label>
  <label>Time window <input type="text" name="time_window" value="${v.timeWindow}" placeholder="09:00-17:00 Europe/London"></label>
  <label>Only for requesters (user ids) <input type="text" name="requesters" value="${v.requesters}"></label>
  <p class="muted">Time window: ${TIME_WINDOW_RULE}.</p></fieldset>`;

const editPath = (uri: string): string => `${base}/edit${query({ uri })}`;

const row = (r: McpResourceView, viewer: Viewer): SafeHtml => html`<tr data-uri="${r.uri}"><td><code>${r.uri}</code></td><td>${r.name}</td><td>${r.type}</td>
<td>${r.permissions.join(', ')}</td><td>${r.requiresApproval ? r.approvers.join(', ') : html`<span class="muted">no approval needed</span>`}</td>
<td>${r.autoApprove.enabled ? html`on${r.autoApprove.conditions.timeWindow ? ` · ${r.autoApprove.conditions.timeWindow}` : ''}${r.autoApprove.conditions.requester ? ` · for ${r.autoApprove.conditions.requester.join(', ')}` : ''}` : 'off'}</td>
<td>${dateTime(r.createdAt)} by ${r.createdBy}</td>
<td>${may('mcp.update', viewer.principal) ? html`<a class="manage-mcp-resource" href="${editPath(r.uri)}">Edit, delete…</a>` : ''}</td></tr>`;

async function listPage(deps: PageDeps, req: FastifyRequest, viewer: Viewer, typed: { uri: string; fields: ResourceFields } | null,
  refusal: SafeHtml | null = null): Promise<SafeHtml> {
  const cursor = param(req, 'cursor') ?? null;
  const listed = await audited(deps.operations, req, viewer, { operation: 'mcp.list', resource: 'mcp:*' },
    () => deps.mcpResources.list(viewer.principal, { limit: PAGE_SIZE, cursor }), (p) => ({ returned: p.items.length }));
  const registered = param(req, 'registered');
  const deleted = param(req, 'deleted');
  return page('MCP resources', viewer.chrome('mcp-resources'), html`${refusal}
${registered && parseMcpUri(registered) ? html`<p class="notice" id="registered">Registered ${registered}.</p>` : ''}
${deleted && parseMcpUri(deleted) ? html`<p class="notice" id="deleted">Deleted ${deleted} and its approvals.</p>` : ''}
<p class="muted">${listed.total} registration(s) of tenant ${viewer.principal.tenantId} (${viewer.principal.mode}): the access paths of MCP clients
to secrets, API key records and custom values. A request for a URI is governed by the most specific registration.</p>
<div class="table-scroll"><table id="mcp-resources"><thead><tr><th>URI</th><th>Name</th><th>Type</th><th>Operations</th><th>Approvers</th><th>Auto-approve</th><th>Registered</th><th>Manage</th></tr></thead><tbody>
${listed.items.map((r) => row(r, viewer))}</tbody></table></div>
${listed.nextCursor ? html`<p><a href="${base}${query({ cursor: listed.nextCursor })}">More</a></p>` : ''}
${may('mcp.register', viewer.principal) ? html`<form method="post" action="${base}" class="card" id="register-form">${csrfField(viewer.session.csrfToken)}
  <h2>Register a resource</h2>
  <p><label>URI <input type="text" name="uri" value="${typed?.uri ?? ''}" required placeholder="svc://secrets/prod/*"></label></p>
  ${settingsFields(typed?.fields ?? newFields(viewer))}
  <p><label>Value (svc://custom/ resources only) <textarea name="value" autocomplete="off" spellcheck="false"></textarea></label></p>
  <button class="primary" id="register">Register</button>
</form>` : ''}`);
}

/** The edit form (approvers, auto-approve, operations, name, description, a custom value) and the delete form, which asks to confirm. */
function editPage(viewer: Viewer, uri: string, type: string, v: ResourceFields, notice: SafeHtml | null = null): SafeHtml {
  const csrf = csrfField(viewer.session.csrfToken);
  return page(`MCP resource ${uri}`, viewer.chrome('mcp-resources'), html`${notice}
<form method="post" action="${base}/edit" class="card" id="edit-form">${csrf}<input type="hidden" name="uri" value="${uri}">
  <h2>Edit <code>${uri}</code></h2>
  <p class="muted">The URI and type (${type}) stay; register another URI for another path.</p>
  ${settingsFields(v)}
  ${type === 'custom' ? html`<p><label>New value (blank: keep it) <textarea name="value" autocomplete="off" spellcheck="false"></textarea></label></p>` : ''}
  <button class="primary" id="save-resource">Save</button> <a href="${base}">Back to MCP resources</a>
</form>
${may('mcp.delete', viewer.principal) ? html`<form method="post" action="${base}/delete" class="card" id="delete-form">${csrf}<input type="hidden" name="uri" value="${uri}">
  <p>Deleting removes this access path and all its approvals: their access tokens open nothing afterwards. It cannot be undone.</p>
  <p><label class="check"><input type="checkbox" name="confirm" value="1" required> Yes, delete ${uri}</label></p>
  <button id="delete-resource">Delete</button>
</form>` : ''}`);
}

export const manageMcpResourceRoutes: RouteRegistrar = (app, deps) => {
  app.get(base, signedIn(deps, 'mcp.list', async (req, _reply, viewer) => listPage(deps, req, viewer, null)));

  app.post(base, signedIn(deps, 'mcp.register', async (req, reply, viewer) => {
    const typed = { uri: field(req, 'uri')?.trim() ?? '', fields: postedFieldsOf(req) };
    return orShowRefusal(reply, async () => {
      const input: McpResourceInput = { uri: typed.uri, ...settingsOf(typed.fields, field(req, 'value')) };
      const made = await audited(deps.operations, req, viewer, { operation: 'mcp.register', resource: mcpAuditResource(typed.uri) },
        () => deps.mcpResources.register(viewer.principal, input), (r) => ({ resourceId: r.id }));
      return new SeeOther(`${base}${query({ registered: made.uri })}`);
    }, (refusal) => listPage(deps, req, viewer, typed, refusal));
  }));

  app.get(`${base}/edit`, signedIn(deps, 'mcp.update', async (req, _reply, viewer) => {
    const r = await deps.mcpResources.get(viewer.principal, param(req, 'uri') ?? '');
    const saved = param(req, 'saved') === '1' ? html`<p class="notice" id="saved">Saved ${r.uri}.</p>` : null;
    return editPage(viewer, r.uri, r.type, fieldsOf(r), saved);
  }));

  app.post(`${base}/edit`, signedIn(deps, 'mcp.update', async (req, reply, viewer) => {
    const uri = field(req, 'uri')?.trim() ?? '';
    const typed = postedFieldsOf(req);
    return orShowRefusal(reply, async () => {
      const change: McpResourceChange = settingsOf(typed, field(req, 'value'));
      await audited(deps.operations, req, viewer, { operation: 'mcp.update', resource: mcpAuditResource(uri) },
        () => deps.mcpResources.update(viewer.principal, uri, change), (r) => ({ resourceId: r.id, changed: Object.keys(change) }));
      return new SeeOther(`${editPath(uri)}&saved=1`);
    }, async (refusal) => {
      const type = parseMcpUri(uri) === null ? '' : (await deps.mcpResources.get(viewer.principal, uri).catch(() => null))?.type ?? '';
      return editPage(viewer, uri, type, typed, refusal);
    });
  }));

  app.post(`${base}/delete`, signedIn(deps, 'mcp.delete', async (req, reply, viewer) => {
    const uri = field(req, 'uri')?.trim() ?? '';
    return orShowRefusal(reply, async () => {
      // The form's checkbox is required; a post without it (scripted, or a browser that skips `required`) is refused.
      if (field(req, 'confirm') !== '1') throw validationError([{ field: 'confirm', reason: 'required', message: 'must be ticked to delete' }]);
      await audited(deps.operations, req, viewer, { operation: 'mcp.delete', resource: mcpAuditResource(uri) },
        () => deps.mcpResources.delete(viewer.principal, uri), (r) => ({ resourceId: r.id }));
      return new SeeOther(`${base}${query({ deleted: uri })}`);
    }, (refusal) => listPage(deps, req, viewer, null, refusal));
  }));
};
