import { signedIn, SeeOther } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page } from '../layout.ts';

export const CONNECTED_APPS_PATH = `${DASHBOARD_PREFIX}/connected-apps`;

/**
 * Connected apps: the OAuth grants of the signed-in tenant and mode (client, scopes, workspace, created, last used),
 * each with Revoke (core/oauth decides who may, and audits it as `oauth.revoke`).
 */
export const oauthConnectedAppsRoutes: RouteRegistrar = (app, deps) => {
  app.get(CONNECTED_APPS_PATH, signedIn(deps, 'oauth.grant_list', async (_req, _reply, viewer) => {
    const grants = await deps.oauth.listGrants(viewer.principal);
    const csrf = csrfField(viewer.session.csrfToken);
    return page('Connected apps', viewer.chrome('connected-apps'), html`
<p class="muted">Apps connected to Mnemo's MCP server through OAuth for tenant ${viewer.principal.tenantId} (${viewer.principal.mode}).
Each acts as the key that granted it, with only the scopes granted, in one workspace.</p>
<div class="table-scroll"><table id="connected-apps"><thead><tr><th>App</th><th>Scopes</th><th>Workspace</th><th>Granted by</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>
${grants.map((g) => html`<tr data-grant="${g.id}"><td>${g.clientName}</td><td>${g.scopes.map((s) => html`<code>${s}</code> `)}</td><td>${g.workspace}</td>
<td>${g.userId} <span class="muted">(${g.keyId})</span></td><td>${dateTime(g.createdAt)}</td><td>${dateTime(g.lastUsedAt)}</td>
<td><form method="post" class="inline" action="${CONNECTED_APPS_PATH}/${encodeURIComponent(g.id)}/revoke">${csrf}<button class="revoke">Revoke</button></form></td></tr>`)}
</tbody></table></div>
${grants.length === 0 ? html`<p class="muted">No connected apps.</p>` : ''}`);
  }));

  app.post<{ Params: { id: string } }>(`${CONNECTED_APPS_PATH}/:id/revoke`, signedIn(deps, 'oauth.grant_revoke', async (req, _reply, viewer) => {
    const { id } = req.params as { id: string };
    await deps.oauth.revokeGrant(viewer.principal, id, { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id });
    return new SeeOther(CONNECTED_APPS_PATH);
  }));
};
