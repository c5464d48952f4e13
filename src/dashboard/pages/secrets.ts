import { audited } from '../audit-trail.ts';
import { param, signedIn } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { newSecretLink, ownerOf, secretManageLink, secretResource } from './manage-secrets.ts';

const PAGE_SIZE = 50;

/**
 * Secrets: names, versions and tags; never a value, except on an explicit reveal (a POST with the session's CSRF
 * token), which is a read like G11's GET /secrets/:name: `secret.accessed` (via `dashboard`) and a `secret.read` row in
 * the audit log, written before the value is shown.
 */
export const secretRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/secrets`;

  app.get(base, signedIn(deps, 'secret.list', async (req, _reply, viewer) => {
    const tag = param(req, 'tag');
    const cursor = param(req, 'cursor') ?? null;
    const listed = await audited(deps.operations, req, viewer, { operation: 'secret.list', resource: 'secret:*' },
      () => deps.secrets.list(ownerOf(viewer.principal), { tags: tag ? [tag] : [], limit: PAGE_SIZE, cursor }));
    const csrf = csrfField(viewer.session.csrfToken);
    return page('Secrets', viewer.chrome('secrets'), html`
<form class="filters" method="get" action="${base}"><label>Tag <input type="text" name="tag" value="${tag ?? ''}"></label><button>Filter</button></form>
${newSecretLink(viewer)}
<p class="muted">${listed.total} secret(s) of tenant ${viewer.principal.tenantId} (${viewer.principal.mode}). Values stay hidden; revealing one is recorded in the audit log.</p>
<div class="table-scroll"><table id="secrets"><thead><tr><th>Name</th><th>Version</th><th>Tags</th><th>Updated</th><th>Expires</th><th></th></tr></thead><tbody>
${listed.items.map((s) => html`<tr><td><code>${s.name}</code></td><td>${s.version}</td><td>${s.tags.map((t) => html`<span class="status">${t}</span> `)}</td>
<td>${dateTime(s.updatedAt)}</td><td>${dateTime(s.expiresAt)}</td>
<td><form method="post" class="inline" action="${base}/${encodeURIComponent(s.name)}/reveal">${csrf}<button class="reveal">Reveal</button></form>${secretManageLink(s.name, viewer)}</td></tr>`)}
</tbody></table></div>
${listed.nextCursor ? html`<p><a href="${base}${query({ tag, cursor: listed.nextCursor })}">More</a></p>` : ''}`);
  }));

  app.post<{ Params: { name: string } }>(`${base}/:name/reveal`, signedIn(deps, 'secret.read', async (req, reply, viewer) => {
    const { name } = req.params as { name: string };
    const secret = await audited(deps.operations, req, viewer, { operation: 'secret.read', resource: secretResource(name) },
      () => deps.secrets.get(ownerOf(viewer.principal), { userId: viewer.principal.userId, via: 'dashboard' }, name));
    reply.header('Cache-Control', 'no-store');
    return page(`Secret ${secret.name}`, viewer.chrome('secrets'), html`
<dl class="card"><dt>Name</dt><dd><code>${secret.name}</code></dd><dt>Version</dt><dd>${secret.version}</dd>
<dt>Tags</dt><dd>${secret.tags.join(', ')}</dd></dl>
<p class="notice">Revealed to ${viewer.principal.userId}; this read is in the audit log (secret.read) and sent as secret.accessed.</p>
<pre class="token" id="secret-value">${secret.value}</pre>
<p><a href="${base}">Back to secrets</a></p>`);
  }));
};
