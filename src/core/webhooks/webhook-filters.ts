import type { StoredEvent } from '../events/event.types.ts';
import type { Webhook } from './webhook.types.ts';

/**
 * Whether a webhook wants an event: it is active, the event is one of its types, the scopes match (a system-wide
 * event reaches every webhook that asks for its type), and — for memory events — its filters hold:
 * `tags` (string or array: the memory has any of them), `memory_type` or `type` (equal, or any of an array), and any
 * other key compared with the memory's metadata (equal, or any of an array). Filters do not apply to other events.
 */
export function webhookWants(webhook: Webhook, event: StoredEvent): boolean {
  if (webhook.status !== 'active' || !webhook.events.includes(event.type)) return false;
  const s = event.scope;
  if (s.tenantId !== null) {
    if (s.tenantId !== webhook.scope.tenantId || s.mode !== webhook.scope.mode) return false;
    if (s.workspace !== null && s.workspace !== webhook.scope.workspace) return false;
  }
  if (!event.type.startsWith('memory.')) return true;
  return filtersMatch(webhook.filters, event.data);
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

export function filtersMatch(filters: Record<string, unknown>, data: Record<string, unknown>): boolean {
  const metadata = (data.metadata ?? {}) as Record<string, unknown>;
  for (const [key, wanted] of Object.entries(filters)) {
    const options = asList(wanted);
    if (key === 'tags') {
      const tags = Array.isArray(data.tags) ? data.tags : [];
      if (!options.some((o) => tags.includes(o))) return false;
    } else if (key === 'memory_type' || key === 'type') {
      if (!options.includes(data.memory_type)) return false;
    } else {
      const have = asList(metadata[key]);
      if (!options.some((o) => have.includes(o))) return false;
    }
  }
  return true;
}
