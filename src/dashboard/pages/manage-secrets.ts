import type { FastifyRequest } from 'fastify';
import { isDomainError, validationError } from '../../core/errors.ts';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import { EXPIRES_IN_RULE, parseExpiresIn, secretNameProblem } from '../../core/secrets/secret.rules.ts';
import type { SecretSummary, UpdateSecretInput } from '../../core/secrets/secret.service.ts';
import { audited } from '../audit-trail.ts';
import { field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { listOf, orShowRefusal } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { may } from '../permissions.ts';

/**
 * Managing secrets (docs/dashboard.md, "Managing"): create one, write a new version (value, tags, expiry) and delete
 * one, through the SecretService calls and audited operations of G11's routes (secret.create, secret.update,
 * secret.delete). A value typed here goes to the service only; no page shows it back (revealing stays secrets.ts's).
 * The edit page shows the secret's current version, tags and expiry, read without the value (SecretService.describe)
 * and audited as G11's metadata read, `secret.list`.
 */
const base = `${DASHBOARD_PREFIX}/secrets`;
/** The audit resource of a secret (as G11 names it) and its owner: shared with the reveal page (secrets.ts). */
export const secretResource = (name: string): string => (secretNameProblem(name) === undefined ? `secret:${name}` : 'secret');
export const ownerOf = (p: Pick<Principal, 'tenantId' | 'mode'>) => ({ tenantId: p.tenantId, mode: p.mode });
const actorOf = (p: Principal) => ({ userId: p.userId, region: null });
const path = (name: string, tail: string): string => `${base}/${encodeURIComponent(name)}/${tail}`;

/** An expiry typed as G11's `expiresIn` (90m, 12h, 30d): blank → `blank`, `never` → null, else milliseconds. */
function expiryOf(text: string | undefined, blank: null | undefined): number | null | undefined {
  const t = text?.trim() ?? '';
  if (t === '') return blank;
  if (t.toLowerCase() === 'never') return null;
  const parsed = parseExpiresIn(t, 'expires_in');
  if ('problem' in parsed) throw validationError([parsed.problem]);
  return parsed.ms;
}

const valueField = html`<p><label>Value <textarea name="value" required autocomplete="off" spellcheck="false"></textarea></label></p>`;

export const manageSecretRoutes: RouteRegistrar = (app, deps) => {
  const newPage = (viewer: Viewer, typed: { name: string; tags: string; expiresIn: string }, refusal: SafeHtml | null = null) =>
    page('New secret', viewer.chrome('secrets'), html`${refusal}
<form method="post" action="${base}/new" class="card" id="secret-form">${csrfField(viewer.session.csrfToken)}
  <p><label>Name <input type="text" name="name" value="${typed.name}" required placeholder="prod.database-url"></label></p>
  ${valueField}
  <p><label>Tags (comma separated) <input type="text" name="tags" value="${typed.tags}"></label>
  <label>Expires in (blank: never) <input type="text" name="expires_in" value="${typed.expiresIn}" placeholder="30d"></label></p>
  <p class="muted">Expiry: ${EXPIRES_IN_RULE}. An expired secret reads as gone.</p>
  <button class="primary" id="create-secret">Create</button> <a href="${base}">Cancel</a>
</form>`);

  app.get(`${base}/new`, signedIn(deps, 'secret.create', async (_req, _reply, viewer) => newPage(viewer, { name: '', tags: '', expiresIn: '' })));

  app.post(`${base}/new`, signedIn(deps, 'secret.create', async (req, reply, viewer) => {
    const name = field(req, 'name')?.trim() ?? '';
    const typed = { name, tags: field(req, 'tags') ?? '', expiresIn: field(req, 'expires_in') ?? '' };
    return orShowRefusal(reply, async () => {
      const input = { name, value: field(req, 'value') ?? '', tags: listOf(typed.tags), expiresInMs: expiryOf(typed.expiresIn, null) ?? null };
      const made = await audited(deps.operations, req, viewer, { operation: 'secret.create', resource: secretResource(name) },
        () => deps.secrets.create(ownerOf(viewer.principal), actorOf(viewer.principal), input), (s) => ({ version: s.version }));
      return new SeeOther(`${path(made.name, 'edit')}${query({ done: 'created', version: made.version })}`);
    }, (refusal) => newPage(viewer, typed, refusal));
  }));

  /**
   * The secret's metadata for the edit page, when the key may list secrets (G11's metadata read needs secrets:read;
   * a write-only key sees the form without it). Missing or expired: NOT_FOUND.
   */
  const currentOf = (req: FastifyRequest, viewer: Viewer, name: string): Promise<SecretSummary | null> =>
    (may('secret.list', viewer.principal)
      ? audited(deps.operations, req, viewer, { operation: 'secret.list', resource: secretResource(name) },
        () => deps.secrets.describe(ownerOf(viewer.principal), name), () => ({ returned: 1 }))
      : Promise.resolve(null));
  /** For a refusal's page: a secret that is gone (or a read refused) shows the form without its metadata. */
  const currentOrNone = (req: FastifyRequest, viewer: Viewer, name: string): Promise<SecretSummary | null> =>
    currentOf(req, viewer, name).catch((err: unknown) => {
      if (isDomainError(err)) return null;
      throw err;
    });

  const editPage = (req: FastifyRequest, viewer: Viewer, name: string, current: SecretSummary | null, refusal: SafeHtml | null = null) => {
    const csrf = csrfField(viewer.session.csrfToken);
    const done = param(req, 'done');
    const version = param(req, 'version');
    return page(`Secret ${name}`, viewer.chrome('secrets'), html`${refusal}
${(done === 'created' || done === 'updated') && version !== undefined && /^\d{1,9}$/.test(version)
    ? html`<p class="notice" id="saved">Secret ${name} ${done}: version ${version}.</p>` : ''}
${current ? html`<dl class="card" id="current"><dt>Version</dt><dd>${current.version}</dd>
<dt>Tags</dt><dd id="current-tags">${current.tags.length > 0 ? current.tags.join(', ') : html`<span class="muted">none</span>`}</dd>
<dt>Expires</dt><dd id="current-expiry">${current.expiresAt ? dateTime(current.expiresAt) : 'never'}</dd><dt>Updated</dt><dd>${dateTime(current.updatedAt)}</dd></dl>` : ''}
<form method="post" action="${path(name, 'version')}" class="card" id="version-form">${csrf}
  <h2>New version</h2>
  ${valueField}
  <p><label>Tags (comma separated; blank: keep them) <input type="text" name="tags" value="${current?.tags.join(', ') ?? ''}"></label>
  <label>Expires in (blank: keep; never: no expiry) <input type="text" name="expires_in" placeholder="30d"></label></p>
  <button class="primary" id="save-version">Save new version</button> <a href="${base}">Back to secrets</a>
</form>
${may('secret.delete', viewer.principal) ? html`<form method="post" action="${path(name, 'delete')}" class="card" id="delete-form">${csrf}
  <p>Deleting removes every version at once; it cannot be undone.</p><button id="delete-secret">Delete ${name}</button>
</form>` : ''}`);
  };

  app.get<{ Params: { name: string } }>(`${base}/:name/edit`, signedIn(deps, 'secret.update', async (req, _reply, viewer) => {
    const { name } = req.params as { name: string };
    const problem = secretNameProblem(name);
    if (problem) throw validationError([problem]);
    return editPage(req, viewer, name, await currentOf(req, viewer, name));
  }));

  app.post<{ Params: { name: string } }>(`${base}/:name/version`, signedIn(deps, 'secret.update', async (req, reply, viewer) => {
    const { name } = req.params as { name: string };
    return orShowRefusal(reply, async () => {
      const tags = listOf(field(req, 'tags'));
      const expiresInMs = expiryOf(field(req, 'expires_in'), undefined);
      const input: UpdateSecretInput = { value: field(req, 'value') ?? '', ...(tags.length > 0 ? { tags } : {}), ...(expiresInMs !== undefined ? { expiresInMs } : {}) };
      const saved = await audited(deps.operations, req, viewer, { operation: 'secret.update', resource: secretResource(name) },
        () => deps.secrets.update(ownerOf(viewer.principal), actorOf(viewer.principal), name, input), (s) => ({ version: s.version }));
      return new SeeOther(`${path(name, 'edit')}${query({ done: 'updated', version: saved.version })}`);
    }, async (refusal) => editPage(req, viewer, name, await currentOrNone(req, viewer, name), refusal));
  }));

  app.post<{ Params: { name: string } }>(`${base}/:name/delete`, signedIn(deps, 'secret.delete', async (req, reply, viewer) => {
    const { name } = req.params as { name: string };
    return orShowRefusal(reply, async () => {
      await audited(deps.operations, req, viewer, { operation: 'secret.delete', resource: secretResource(name) },
        () => deps.secrets.delete(ownerOf(viewer.principal), name));
      return new SeeOther(base);
    }, async (refusal) => editPage(req, viewer, name, await currentOrNone(req, viewer, name), refusal));
  }));
};

/** On the secrets list: the New secret link (for a key that may create one). */
export const newSecretLink = (viewer: Viewer): SafeHtml =>
  (may('secret.create', viewer.principal) ? html`<p><a href="${base}/new" id="new-secret">New secret</a></p>` : html``);

/** On the secrets list: a row's link to its new-version and delete forms. */
export const secretManageLink = (name: string, viewer: Viewer): SafeHtml =>
  (may('secret.update', viewer.principal) ? html` <a class="manage-secret" href="${path(name, 'edit')}">New version, delete…</a>` : html``);
