import type { Principal } from '../../core/api-keys/api-key.types.ts';
import type { OperationName } from '../../core/operations/catalog.ts';
import { authorize } from '../../core/operations/runner.ts';
import { DomainError, validationError } from '../../core/errors.ts';
import { WEBHOOK_FLAVOURS } from '../../core/webhooks/webhook-flavours.ts';
import type { WebhookKind } from '../../core/webhooks/webhook.types.ts';
import { audited } from '../audit-trail.ts';
import { field, param, SeeOther, signedIn, type Viewer } from '../context.ts';
import { orShowRefusal } from '../forms.ts';
import { html, SafeHtml } from '../html.ts';
import type { PageDeps, RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';
import { may } from '../permissions.ts';

const PAGE_SIZE = 50;

type Action = 'read' | 'create' | 'update' | 'redeliver';

/** Which webhooks a key sees and changes: each kind's actions run that kind's operations (core/operations: permissions, quotas, audit). */
const KINDS: readonly ({ kind: WebhookKind; label: string } & Record<Action, OperationName>)[] = [
  { kind: 'g9', label: 'Memory webhooks (G9, this workspace)', read: 'webhook.read', create: 'webhook.create', update: 'webhook.update', redeliver: 'webhook.redeliver' },
  { kind: 'g10', label: 'Event webhooks (G10)', read: 'webhook.read', create: 'webhook.create', update: 'webhook.update', redeliver: 'webhook.redeliver' },
  {
    kind: 'g11', label: 'Security webhooks (G11)', read: 'security_webhook.read', create: 'security_webhook.create',
    update: 'security_webhook.update', redeliver: 'security_webhook.redeliver',
  },
];
const operationsOf = (action: Action): OperationName[] => [...new Set(KINDS.map((k) => k[action]))];

function kindOf(text: string | undefined, principal: Principal, need: Action) {
  const found = KINDS.find((k) => k.kind === text);
  if (!found) throw validationError([{ field: 'kind', reason: 'invalid_value', message: 'must be g9, g10 or g11' }]);
  authorize(found[need], principal);
  return found;
}

/** The audit resource of a webhook, as G11's routes name it (only G11 operations write a row). */
const resourceOf = (id: string | null): string => (id !== null && /^(whk|webhook)_[A-Za-z0-9]{1,60}$/.test(id) ? `webhook:${id}` : 'webhook');

const statusBadge = (s: string) => html`<span class="status status-${s}">${s}</span>`;

/** Pause (disable) an active webhook, resume a disabled or failed one: G9 and G10's PUT `status`, G11's PATCH. */
function statusForm(kind: WebhookKind, id: string, status: string, csrf: string, back: 'list' | 'detail'): SafeHtml {
  const to = status === 'active' ? 'disabled' : 'active';
  return html`<form method="post" class="inline" action="${DASHBOARD_PREFIX}/webhooks/${kind}/${id}/status">${csrfField(csrf)}
<input type="hidden" name="status" value="${to}"><input type="hidden" name="back" value="${back}">
<button class="${to === 'active' ? 'resume' : 'pause'}" aria-label="${to === 'active' ? 'Resume' : 'Pause'} ${id}">${to === 'active' ? 'Resume' : 'Pause'}</button></form>`;
}

interface CreateForm { kind: string; url: string; events: string; description: string; maxAttempts: string }
const EMPTY_FORM: CreateForm = { kind: 'g9', url: '', events: '', description: '', maxAttempts: '' };

function createForm(viewer: Viewer, values: CreateForm): SafeHtml {
  const creatable = KINDS.filter((k) => may(k.create, viewer.principal));
  if (creatable.length === 0) return html``;
  return html`<details class="card" id="create-webhook"${values.url ? html` open` : ''}><summary><strong>Create a webhook</strong></summary>
<form method="post" action="${DASHBOARD_PREFIX}/webhooks">${csrfField(viewer.session.csrfToken)}
<p><label>Kind <select name="kind" id="webhook-kind">${creatable.map((k) => html`<option value="${k.kind}"${values.kind === k.kind ? html` selected` : ''}>${k.label}</option>`)}</select></label></p>
<p><label>URL (http or https, reachable from the server) <input type="url" name="url" value="${values.url}" required size="48"></label></p>
<p><label>Events, separated by commas <input type="text" name="events" value="${values.events}" required size="48" aria-describedby="event-types"></label></p>
<div id="event-types" class="muted">${creatable.map((k) => html`<div>${k.kind.toUpperCase()}: <code>${WEBHOOK_FLAVOURS[k.kind].eventTypes.join(', ')}</code></div>`)}</div>
<p><label>Description (G10 only) <input type="text" name="description" value="${values.description}" maxlength="1000"></label></p>
<p><label>Attempts per delivery (G9 only, 1 to 10) <input type="number" name="max_attempts" value="${values.maxAttempts}" min="1" max="10"></label></p>
<button class="primary" id="create">Create</button>
<p class="muted">The signing secret is generated and shown once, after creation. Creations count against the key's hourly webhook quota.</p>
</form></details>`;
}

async function listPage(deps: PageDeps, viewer: Viewer, values: CreateForm, refusal: SafeHtml | null): Promise<SafeHtml> {
  const visible = KINDS.filter((k) => may(k.read, viewer.principal));
  const sections = await Promise.all(visible.map(async (k) => ({ ...k, ...(await deps.webhooks.list(viewer.scope, k.kind, { limit: 100, offset: 0 })) })));
  const csrf = viewer.session.csrfToken;
  return page('Webhooks', viewer.chrome('webhooks'), html`
${refusal ?? ''}
${createForm(viewer, values)}
${sections.map((s) => html`
<h2>${s.label}</h2>
${s.items.length === 0 ? html`<p class="muted">None.</p>` : html`
<div class="table-scroll"><table class="webhooks" id="webhooks-${s.kind}"><thead><tr><th>Webhook</th><th>URL</th><th>Events</th><th>Status</th><th class="num">Attempts</th><th class="num">Succeeded</th><th class="num">Failed</th><th>Last delivery</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${s.items.map((w) => html`<tr data-webhook="${w.id}"><td><a href="${DASHBOARD_PREFIX}/webhooks/${w.kind}/${w.id}">${w.id}</a>${w.description ? html`<div class="muted">${w.description}</div>` : ''}</td>
<td>${w.url}</td><td>${w.events.join(', ')}</td><td>${statusBadge(w.status)}</td><td class="num">${w.stats.totalAttempts}</td>
<td class="num">${w.stats.successfulDeliveries}</td><td class="num">${w.stats.failedDeliveries}</td><td>${dateTime(w.lastDeliveryAt)}</td>
<td>${may(s.update, viewer.principal) ? statusForm(w.kind, w.id, w.status, csrf, 'list') : ''}</td></tr>`)}
</tbody></table></div>`}`)}`);
}

/** The create form's fields as the service takes them; a field the kind does not take is refused by the service, by name. */
function newWebhookInput(form: CreateForm) {
  const events = form.events.split(',').map((e) => e.trim()).filter((e) => e !== '');
  const maxAttempts = form.maxAttempts.trim() === '' ? undefined : Number(form.maxAttempts);
  return {
    url: form.url.trim(), events,
    ...(form.description.trim() !== '' ? { description: form.description.trim() } : {}),
    ...(maxAttempts !== undefined ? { retryPolicy: { maxAttempts } } : {}),
  };
}

export const webhookRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/webhooks`;
  const READS = operationsOf('read');

  app.get(base, signedIn(deps, READS, async (_req, _reply, viewer) => {
    if (!KINDS.some((k) => may(k.read, viewer.principal))) {
      throw new DomainError('PERMISSION_DENIED', 'This API key lacks the memories:read and secrets:read scopes: it sees no webhooks');
    }
    return listPage(deps, viewer, EMPTY_FORM, null);
  }));

  // Create: the kind's create operation (its permission, the hourly webhook quota, G11's audit row), as the API runs it.
  app.post(base, signedIn(deps, operationsOf('create'), async (req, reply, viewer) => {
    const form: CreateForm = {
      kind: field(req, 'kind') ?? '', url: field(req, 'url') ?? '', events: field(req, 'events') ?? '',
      description: field(req, 'description') ?? '', maxAttempts: field(req, 'max_attempts') ?? '',
    };
    const created = await orShowRefusal(reply, () => {
      const k = kindOf(form.kind, viewer.principal, 'create');
      return audited(deps.operations, req, viewer, { operation: k.create, resource: resourceOf(null) },
        () => deps.webhooks.create(viewer.principal, viewer.scope, k.kind, newWebhookInput(form)), (w) => ({ webhookId: w.id }));
    }, (refusal) => listPage(deps, viewer, form, refusal));
    if (created instanceof SafeHtml) return created;
    reply.header('Cache-Control', 'no-store');
    return page(`Webhook ${created.id} created`, viewer.chrome('webhooks'), html`
<p class="notice" id="created">Created ${statusBadge(created.status)}: events ${created.events.join(', ')} will be sent to ${created.url}.</p>
<div class="card"><p>Its signing secret, shown this once (deliveries are signed with it; it is stored sealed):</p>
<p class="token" id="webhook-secret">${created.secret}</p></div>
<p><a href="${base}/${created.kind}/${created.id}" id="created-link">Open the webhook</a> · <a href="${base}">All webhooks</a></p>`);
  }));

  app.post<{ Params: { kind: string; id: string } }>(`${base}/:kind/:id/status`, signedIn(deps, operationsOf('update'), async (req, _reply, viewer) => {
    const { kind: kindText, id } = req.params as { kind: string; id: string };
    const k = kindOf(kindText, viewer.principal, 'update');
    const status = field(req, 'status');
    if (status !== 'active' && status !== 'disabled') throw validationError([{ field: 'status', reason: 'invalid_value', message: 'must be active or disabled' }]);
    await audited(deps.operations, req, viewer, { operation: k.update, resource: resourceOf(id), metadata: { status } },
      () => deps.webhooks.update(viewer.scope, k.kind, id, { status }));
    const changed = status === 'active' ? 'resumed' : 'paused';
    return new SeeOther(field(req, 'back') === 'list' ? base : `${base}/${k.kind}/${id}${query({ changed })}`);
  }));

  app.get<{ Params: { kind: string; id: string } }>(`${base}/:kind/:id`, signedIn(deps, READS, async (req, _reply, viewer) => {
    const { kind: kindText, id } = req.params as { kind: string; id: string };
    const k = kindOf(kindText, viewer.principal, 'read');
    const offset = Math.max(0, Math.floor(Number(param(req, 'offset') ?? 0)) || 0);
    const { webhook: w, items, total } = await deps.webhooks.deliveries(viewer.scope, k.kind, id, { limit: PAGE_SIZE, offset });
    const canRedeliver = may(k.redeliver, viewer.principal);
    const requeued = param(req, 'requeued');
    const changed = param(req, 'changed');
    const csrf = viewer.session.csrfToken;
    return page(`Webhook ${w.id}`, viewer.chrome('webhooks'), html`
${requeued ? html`<p class="notice" id="requeued">Delivery ${requeued} is due again: a worker sends it shortly.</p>` : ''}
${changed === 'paused' || changed === 'resumed' ? html`<p class="notice" id="changed">Webhook ${changed}.</p>` : ''}
<dl class="card"><dt>URL</dt><dd>${w.url}</dd><dt>Events</dt><dd>${w.events.join(', ')}</dd>
<dt>Status</dt><dd id="webhook-status">${statusBadge(w.status)} ${may(k.update, viewer.principal) ? statusForm(w.kind, w.id, w.status, csrf, 'detail') : ''}</dd>
<dt>Kind</dt><dd>${k.label}</dd><dt>Created</dt><dd>${dateTime(w.createdAt)}</dd></dl>
${w.status !== 'active' && canRedeliver ? html`<p class="muted">Resume the webhook to redeliver a delivery.</p>` : ''}
<h2>Deliveries (${total})</h2>
<div class="table-scroll"><table id="deliveries"><thead><tr><th>Delivery</th><th>Event</th><th>Status</th><th class="num">Attempts</th><th>Last answer</th><th>Next attempt / finished</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${items.map((d) => html`<tr data-delivery="${d.id}" data-state="${d.state}"><td><code>${d.id}</code><div class="muted">${dateTime(d.createdAt)}</div></td>
<td>${d.eventType ?? html`<span class="muted">(pruned)</span>`}<div class="muted">${d.eventId ?? ''}</div></td>
<td>${statusBadge(d.state)}</td><td class="num">${d.attempts}</td>
<td>${d.lastStatus ?? ''}${d.lastError ? html`<div class="muted">${d.lastError}</div>` : ''}</td>
<td>${d.state === 'pending' ? dateTime(d.nextAttemptAt) : dateTime(d.finishedAt)}</td>
<td>${d.state !== 'pending' && canRedeliver && w.status === 'active' ? html`<form method="post" class="inline"
  action="${base}/${w.kind}/${w.id}/deliveries/${d.id}/redeliver">${csrfField(csrf)}<button class="redeliver" aria-label="Redeliver ${d.id}">Redeliver</button></form>` : ''}</td></tr>`)}
</tbody></table></div>
<p>${offset > 0 ? html`<a href="${base}/${w.kind}/${w.id}${query({ offset: Math.max(0, offset - PAGE_SIZE) })}">Newer</a> ` : ''}
${offset + PAGE_SIZE < total ? html`<a href="${base}/${w.kind}/${w.id}${query({ offset: offset + PAGE_SIZE })}">Older</a>` : ''}</p>`);
  }));

  app.post<{ Params: { kind: string; id: string; deliveryId: string } }>(`${base}/:kind/:id/deliveries/:deliveryId/redeliver`,
    signedIn(deps, operationsOf('redeliver'), async (req, _reply, viewer) => {
      const { kind: kindText, id, deliveryId } = req.params as { kind: string; id: string; deliveryId: string };
      const k = kindOf(kindText, viewer.principal, 'redeliver');
      await audited(deps.operations, req, viewer, { operation: k.redeliver, resource: resourceOf(id), metadata: { deliveryId } },
        () => deps.webhooks.redeliver(viewer.scope, k.kind, id, deliveryId));
      return new SeeOther(`${base}/${k.kind}/${id}${query({ requeued: deliveryId })}`);
    }));
};
