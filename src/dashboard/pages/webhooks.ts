import type { Principal } from '../../core/api-keys/api-key.types.ts';
import type { OperationName } from '../../core/operations/catalog.ts';
import { authorize } from '../../core/operations/runner.ts';
import { DomainError, validationError } from '../../core/errors.ts';
import type { WebhookKind } from '../../core/webhooks/webhook.types.ts';
import { param, SeeOther, signedIn } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { csrfField, DASHBOARD_PREFIX, dateTime, page, query } from '../layout.ts';

const PAGE_SIZE = 50;

/** Which webhooks a key sees: each kind's section runs that kind's operations (core/operations: their permissions). */
const KINDS: readonly { kind: WebhookKind; label: string; read: OperationName; redeliver: OperationName }[] = [
  { kind: 'g9', label: 'Memory webhooks (G9, this workspace)', read: 'webhook.read', redeliver: 'webhook.redeliver' },
  { kind: 'g10', label: 'Event webhooks (G10)', read: 'webhook.read', redeliver: 'webhook.redeliver' },
  { kind: 'g11', label: 'Security webhooks (G11)', read: 'security_webhook.read', redeliver: 'security_webhook.redeliver' },
];
const READS = [...new Set(KINDS.map((k) => k.read))];
const REDELIVERS = [...new Set(KINDS.map((k) => k.redeliver))];

function kindOf(text: string, principal: Principal, need: 'read' | 'redeliver') {
  const found = KINDS.find((k) => k.kind === text);
  if (!found) throw validationError([{ field: 'kind', reason: 'invalid_value', message: 'must be g9, g10 or g11' }]);
  authorize(found[need], principal);
  return found;
}

/** Whether `principal` may run `operation` (a section or a button shown only to those who may use it). */
const may = (operation: OperationName, principal: Principal): boolean => {
  try {
    authorize(operation, principal);
    return true;
  } catch {
    return false;
  }
};

const statusBadge = (s: string) => html`<span class="status status-${s}">${s}</span>`;

export const webhookRoutes: RouteRegistrar = (app, deps) => {
  const base = `${DASHBOARD_PREFIX}/webhooks`;

  app.get(base, signedIn(deps, READS, async (_req, _reply, viewer) => {
    const visible = KINDS.filter((k) => may(k.read, viewer.principal));
    if (visible.length === 0) {
      throw new DomainError('PERMISSION_DENIED', 'This API key lacks the memories:read and secrets:read scopes: it sees no webhooks');
    }
    const sections = await Promise.all(visible.map(async (k) => ({ ...k, ...(await deps.webhooks.list(viewer.scope, k.kind, { limit: 100, offset: 0 })) })));
    return page('Webhooks', viewer.chrome('webhooks'), sections.map((s) => html`
<h2>${s.label}</h2>
${s.items.length === 0 ? html`<p class="muted">None.</p>` : html`
<table class="webhooks" id="webhooks-${s.kind}"><thead><tr><th>Webhook</th><th>URL</th><th>Events</th><th>Status</th><th>Attempts</th><th>Succeeded</th><th>Failed</th><th>Last delivery</th></tr></thead><tbody>
${s.items.map((w) => html`<tr><td><a href="${base}/${w.kind}/${w.id}">${w.id}</a>${w.description ? html`<div class="muted">${w.description}</div>` : ''}</td>
<td>${w.url}</td><td>${w.events.join(', ')}</td><td>${statusBadge(w.status)}</td><td>${w.stats.totalAttempts}</td>
<td>${w.stats.successfulDeliveries}</td><td>${w.stats.failedDeliveries}</td><td>${dateTime(w.lastDeliveryAt)}</td></tr>`)}
</tbody></table>`}`));
  }));

  app.get<{ Params: { kind: string; id: string } }>(`${base}/:kind/:id`, signedIn(deps, READS, async (req, _reply, viewer) => {
    const { kind: kindText, id } = req.params as { kind: string; id: string };
    const k = kindOf(kindText, viewer.principal, 'read');
    const offset = Math.max(0, Math.floor(Number(param(req, 'offset') ?? 0)) || 0);
    const { webhook: w, items, total } = await deps.webhooks.deliveries(viewer.scope, k.kind, id, { limit: PAGE_SIZE, offset });
    const canRedeliver = may(k.redeliver, viewer.principal);
    const requeued = param(req, 'requeued');
    return page(`Webhook ${w.id}`, viewer.chrome('webhooks'), html`
${requeued ? html`<p class="notice">Delivery ${requeued} is due again: a worker sends it shortly.</p>` : ''}
<dl class="card"><dt>URL</dt><dd>${w.url}</dd><dt>Events</dt><dd>${w.events.join(', ')}</dd><dt>Status</dt><dd>${statusBadge(w.status)}</dd>
<dt>Kind</dt><dd>${k.label}</dd><dt>Created</dt><dd>${dateTime(w.createdAt)}</dd></dl>
<h2>Deliveries (${total})</h2>
<table id="deliveries"><thead><tr><th>Delivery</th><th>Event</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Next attempt / finished</th><th></th></tr></thead><tbody>
${items.map((d) => html`<tr><td><code>${d.id}</code><div class="muted">${dateTime(d.createdAt)}</div></td>
<td>${d.eventType ?? html`<span class="muted">(pruned)</span>`}<div class="muted">${d.eventId ?? ''}</div></td>
<td>${statusBadge(d.state)}</td><td>${d.attempts}</td>
<td>${d.lastStatus ?? ''}${d.lastError ? html`<div class="muted">${d.lastError}</div>` : ''}</td>
<td>${d.state === 'pending' ? dateTime(d.nextAttemptAt) : dateTime(d.finishedAt)}</td>
<td>${d.state !== 'pending' && canRedeliver && w.status === 'active' ? html`<form method="post" class="inline"
  action="${base}/${w.kind}/${w.id}/deliveries/${d.id}/redeliver">${csrfField(viewer.session.csrfToken)}<button class="redeliver">Redeliver</button></form>` : ''}</td></tr>`)}
</tbody></table>
<p>${offset > 0 ? html`<a href="${base}/${w.kind}/${w.id}${query({ offset: Math.max(0, offset - PAGE_SIZE) })}">Newer</a> ` : ''}
${offset + PAGE_SIZE < total ? html`<a href="${base}/${w.kind}/${w.id}${query({ offset: offset + PAGE_SIZE })}">Older</a>` : ''}</p>`);
  }));

  app.post<{ Params: { kind: string; id: string; deliveryId: string } }>(`${base}/:kind/:id/deliveries/:deliveryId/redeliver`,
    signedIn(deps, REDELIVERS, async (req, _reply, viewer) => {
      const { kind: kindText, id, deliveryId } = req.params as { kind: string; id: string; deliveryId: string };
      const k = kindOf(kindText, viewer.principal, 'redeliver');
      await deps.webhooks.redeliver(viewer.scope, k.kind, id, deliveryId);
      return new SeeOther(`${base}/${k.kind}/${id}${query({ requeued: deliveryId })}`);
    }));
};
