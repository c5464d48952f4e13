import { audited } from '../audit-trail.ts';
import { param, signedIn } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';

const PAGE_SIZE = 50;

/**
 * The G11 audit log of the key's tenant and mode, newest first, with filters, and the chain's verification:
 * every row of this tenant and mode's chain checked link by link (AuditService.verify). Reading it is itself
 * recorded (`audit.read`), as G11's GET /audit-logs is.
 */
export const auditRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/audit`;
  app.get(base, signedIn(deps, 'audit.list', async (req, _reply, viewer) => {
    const owner = { tenantId: viewer.principal.tenantId, mode: viewer.principal.mode };
    const filter = { action: param(req, 'action'), actor: param(req, 'actor'), resource: param(req, 'resource') };
    const cursor = param(req, 'cursor') ?? null;
    const listed = await audited(deps.operations, req, viewer, { operation: 'audit.list', resource: 'audit-log:*' },
      () => deps.audit.list(owner, filter, { limit: PAGE_SIZE, cursor }));
    const verification = await deps.audit.verify(owner);
    const broken = verification.broken[0];
    return page('Audit log', viewer.chrome('audit'), html`
<div class="card" id="chain">${verification.ok
    ? html`<p><span class="status status-ok">chain verified</span> ${verification.rows} row(s), head
      #${verification.intact[0]?.headSeq ?? 0} <code>${verification.intact[0]?.headHash.slice(0, 16) ?? ''}…</code>: every row follows the one before it and matches its hash.</p>`
    : html`<p><span class="status status-broken">chain broken</span> ${broken?.message ?? ''} (${broken?.reason ?? ''})</p>`}</div>
<form class="filters" method="get" action="${base}">
  <label>Action <input type="text" name="action" value="${filter.action ?? ''}" placeholder="secret.* or mcp.respond"></label>
  <label>Actor <input type="text" name="actor" value="${filter.actor ?? ''}"></label>
  <label>Resource <input type="text" name="resource" value="${filter.resource ?? ''}"></label><button>Filter</button>
</form>
<div class="table-scroll"><table id="audit"><thead><tr><th>#</th><th>When</th><th>Actor</th><th>Action</th><th>Resource</th><th>Outcome</th><th>Details</th></tr></thead><tbody>
${listed.items.map((r) => html`<tr><td>${r.seq}</td><td>${dateTime(r.timestamp)}</td><td>${r.actor.userId}</td><td><code>${r.action}</code></td>
<td>${r.resource}</td><td><span class="status status-${r.outcome === 'success' ? 'ok' : 'failed'}">${r.status}</span></td>
<td class="muted">${Object.keys(r.metadata).length > 0 ? JSON.stringify(r.metadata) : ''}</td></tr>`)}
</tbody></table></div>
${listed.nextCursor ? html`<p><a href="${base}${query({ ...filter, cursor: listed.nextCursor })}">Older</a></p>` : ''}`);
  }));
};
