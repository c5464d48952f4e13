import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IssuedKey } from '../../core/api-keys/api-key-management.service.ts';
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../../core/api-keys/api-key.rules.ts';
import { ALL_PERMISSIONS, TIERS, type ApiKeyRecord, type Permission, type Tier } from '../../core/api-keys/api-key.types.ts';
import { validationError } from '../../core/errors.ts';
import { audited } from '../audit-trail.ts';
import { field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { fields, orShowRefusal } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';

/**
 * API keys (docs/dashboard.md, "Managing"): the keys of the signed-in key's tenant and mode, and create, rotate and
 * revoke through G11's key management (core/api-keys/api-key-management.service.ts) as the audited operations
 * apikey.create / apikey.rotate / apikey.revoke: the service refuses a key holding more than the signed-in one, here
 * as on the API. A new key's text is shown once, on the answer to the POST, and never stored.
 */
const base = `${DASHBOARD_PREFIX}/api-keys`;
const PAGE_SIZE = 50;
const GRACE_CHOICES: readonly [seconds: number, label: string][] = [
  [0, 'none: the old key stops now'], [3_600, '1 hour'], [DEFAULT_ROTATION_GRACE_SECONDS, '24 hours'], [7 * 86_400, '7 days'],
];
/** `api-key:<id>` (the record's id, never the key), as G11's audit rows name it. */
const resourceOf = (id: string): string => (/^key_[A-Za-z0-9]{1,60}$/.test(id) ? `api-key:${id}` : 'api-key');

const isTier = (s: string | undefined): s is Tier => s !== undefined && (TIERS as readonly string[]).includes(s);

function stateOf(k: ApiKeyRecord, now: Date): string {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && k.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (k.replacedBy) return 'rotated';
  return 'active';
}

function keyRow(k: ApiKeyRecord, viewer: Viewer, now: Date): SafeHtml {
  const state = stateOf(k, now);
  const csrf = csrfField(viewer.session.csrfToken);
  const live = state === 'active';
  return html`<tr data-key="${k.id}" data-state="${state}"><td>${k.name}${k.id === viewer.principal.keyId ? html` <span class="muted">(this session's key)</span>` : ''}</td>
<td><code>${k.id}</code><br><code class="muted">${k.displayPrefix}…</code></td><td>${k.scopes.join(', ')}</td><td>${k.tier}</td>
<td>${dateTime(k.createdAt)}</td><td>${dateTime(k.expiresAt)}</td>
<td><span class="status status-${state}">${state}</span>${k.replacedBy ? html` <span class="muted">by ${k.replacedBy}</span>` : ''}</td>
<td>${live ? html`<form method="post" action="${base}/${k.id}/rotate" class="inline rotate">${csrf}
  <label>Old key works for <select name="grace_seconds">${GRACE_CHOICES.map(([s, label]) => html`<option value="${s}"${s === DEFAULT_ROTATION_GRACE_SECONDS ? html` selected` : ''}>${label}</option>`)}</select></label>
  <button class="rotate">Rotate</button></form>` : ''}
${state !== 'revoked' ? html`<form method="post" action="${base}/${k.id}/revoke" class="inline">${csrf}<button class="revoke">Revoke</button></form>` : ''}</td></tr>`;
}

async function listPage(deps: PageDeps, req: FastifyRequest, viewer: Viewer, top: SafeHtml | null = null): Promise<SafeHtml> {
  const cursor = param(req, 'cursor') ?? null;
  const listed = await audited(deps.operations, req, viewer, { operation: 'apikey.list', resource: 'api-key:*' },
    () => deps.apiKeyManagement.list(viewer.principal, { limit: PAGE_SIZE, cursor }), (p) => ({ returned: p.items.length }));
  const now = deps.clock.now();
  const own = viewer.principal;
  const revoked = param(req, 'revoked');
  return page('API keys', viewer.chrome('api-keys'), html`${top}
${revoked && /^key_[A-Za-z0-9]{1,60}$/.test(revoked) ? html`<p class="notice" id="revoked">Key ${revoked} revoked: its next request is refused.</p>` : ''}
<form method="post" action="${base}" class="card" id="create-key">${csrfField(viewer.session.csrfToken)}
  <h2>New key</h2>
  <p class="muted">A new key belongs to tenant ${own.tenantId} (${own.mode}) and user ${own.userId}. It can hold only scopes and a tier this
  key holds (${[...own.scopes].join(', ')}; tier ${own.tier}); the server refuses more.</p>
  <p><label>Name <input type="text" name="name" required maxlength="100" placeholder="CI deploy"></label>
  <label>Tier <select name="tier">${TIERS.map((t) => html`<option${t === own.tier ? html` selected` : ''}>${t}</option>`)}</select></label></p>
  <fieldset><legend>Scopes</legend>${ALL_PERMISSIONS.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${own.scopes.has(s) ? html` checked` : ''}> ${s}${own.scopes.has(s) ? '' : html` <span class="muted">(not held by this key)</span>`}</label> `)}</fieldset>
  <p><button class="primary" id="create">Create key</button></p>
</form>
<p class="muted">${listed.total} key(s) of tenant ${own.tenantId} (${own.mode}), oldest first. Keys are never shown again after they are made: only their prefix.</p>
<div class="table-scroll"><table id="api-keys"><thead><tr><th>Name</th><th>Id</th><th>Scopes</th><th>Tier</th><th>Created</th><th>Expires</th><th>State</th><th>Actions</th></tr></thead><tbody>
${listed.items.map((k) => keyRow(k, viewer, now))}</tbody></table></div>
${listed.nextCursor ? html`<p><a href="${base}${query({ cursor: listed.nextCursor })}">More</a></p>` : ''}`);
}

/** The answer that shows a new key's text, once (not a redirect: nothing else could show it again). */
function issuedPage(reply: FastifyReply, viewer: Viewer, issued: IssuedKey, what: string): SafeHtml {
  reply.header('Cache-Control', 'no-store');
  const k = issued.record;
  return page(`Key ${k.name} ${what}`, viewer.chrome('api-keys'), html`
<div class="card"><p>The new key, shown this once: copy it now. Mnemo keeps only its digest.</p>
<p class="token" id="new-key">${issued.key}</p>
<dl><dt>Id</dt><dd><code>${k.id}</code></dd><dt>Scopes</dt><dd id="new-key-scopes">${k.scopes.join(', ')}</dd><dt>Tier</dt><dd>${k.tier}</dd>
<dt>Expires</dt><dd>${dateTime(k.expiresAt)}</dd></dl></div>
<p><a href="${base}" id="back">Back to API keys</a></p>`);
}

export const manageApiKeyRoutes: RouteRegistrar = (app, deps) => {
  app.get(base, signedIn(deps, 'apikey.list', async (req, _reply, viewer) => listPage(deps, req, viewer)));

  app.post(base, signedIn(deps, 'apikey.create', async (req, reply, viewer) => {
    const chosen = fields(req, 'scopes');
    const tier = field(req, 'tier');
    return orShowRefusal(reply, async () => {
      // The scopes' names and number are the core's to judge (scopesProblems); the tier is this form's to parse.
      if (!isTier(tier)) throw validationError([{ field: 'tier', reason: 'invalid_value', message: `must be one of ${TIERS.join(', ')}` }]);
      const issued = await audited(deps.operations, req, viewer, { operation: 'apikey.create', resource: 'api-key' },
        () => deps.apiKeyManagement.create(viewer.principal, { name: field(req, 'name') ?? '', scopes: chosen as Permission[], tier }),
        (made) => ({ keyId: made.record.id }));
      return issuedPage(reply, viewer, issued, 'created');
    }, (refusal) => listPage(deps, req, viewer, refusal));
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/rotate`, signedIn(deps, 'apikey.rotate', async (req, reply, viewer) => {
    const { id } = req.params as { id: string };
    const graceText = field(req, 'grace_seconds');
    return orShowRefusal(reply, async () => {
      const grace = graceText === undefined || graceText.trim() === '' ? undefined : Number(graceText);
      const issued = await audited(deps.operations, req, viewer, { operation: 'apikey.rotate', resource: resourceOf(id), metadata: { gracePeriodSeconds: grace ?? null } },
        () => deps.apiKeyManagement.rotate(viewer.principal, id, { gracePeriodSeconds: grace }), (made) => ({ replacedBy: made.record.id }));
      return issuedPage(reply, viewer, issued, 'rotated');
    }, (refusal) => listPage(deps, req, viewer, refusal));
  }));

  app.post<{ Params: { id: string } }>(`${base}/:id/revoke`, signedIn(deps, 'apikey.revoke', async (req, reply, viewer) => {
    const { id } = req.params as { id: string };
    return orShowRefusal(reply, async () => {
      await audited(deps.operations, req, viewer, { operation: 'apikey.revoke', resource: resourceOf(id) },
        () => deps.apiKeyManagement.revoke(viewer.principal, id));
      return new SeeOther(`${base}${query({ revoked: id })}`);
    }, (refusal) => listPage(deps, req, viewer, refusal));
  }));
};
