import type { FieldProblem } from '../../core/errors.ts';
import { MEMORY_EVENT_TYPES } from '../../core/events/event.types.ts';
import { parseStreamFilter, type StreamFilter } from '../../core/streams/event-filter.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';

export interface StreamParams {
  types: string[];
  filter: StreamFilter;
  /** Seconds between heartbeats, after raising values below the minimum. */
  heartbeatSeconds: number;
  /** From the `last_event_id` query parameter (the `Last-Event-ID` header wins). */
  lastEventId: string | undefined;
}

const FILTER_KEY = /^filters\[([^\]]*)\](\[\])?$/;
const KNOWN = new Set(['events', 'heartbeat', 'last_event_id']);

/**
 * Reads the G8 query string as sent (repeated parameters and `filters[key]=value` keys survive intact):
 * - `events`: comma-separated and/or repeated; each must be a memory-surface event type; none means all of them;
 * - `filters[<key>]=<value>`: see core/streams/event-filter.ts;
 * - `heartbeat`: seconds; below the minimum (30) it is raised to it, above the maximum it is an error;
 * - `last_event_id`: the resume point for clients that cannot send the Last-Event-ID header.
 * Other parameters are ignored.
 */
export function parseStreamParams(url: string, settings: Pick<RealtimeSettings, 'heartbeatDefaultSeconds' | 'heartbeatMaxSeconds'>,
  problems: FieldProblem[]): StreamParams {
  const q = url.indexOf('?');
  const search = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  const types: string[] = [];
  const filterPairs: [string, string][] = [];
  const seen = new Map<string, string[]>();
  for (const [key, value] of search) {
    const f = FILTER_KEY.exec(key);
    if (f) filterPairs.push([`${f[1]}${f[2] ?? ''}`, value]);
    else if (KNOWN.has(key)) seen.set(key, [...(seen.get(key) ?? []), value]);
  }

  for (const value of seen.get('events') ?? []) {
    for (const t of value.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!(MEMORY_EVENT_TYPES as readonly string[]).includes(t)) {
        problems.push({ field: 'events', reason: 'not_found', message: `unknown event type "${t.slice(0, 64)}"; one of: ${MEMORY_EVENT_TYPES.join(', ')}` });
      } else if (!types.includes(t)) types.push(t);
    }
  }
  if ((seen.get('events')?.length ?? 0) > 0 && types.length === 0 && !problems.some((p) => p.field === 'events')) {
    problems.push({ field: 'events', reason: 'empty', message: 'names no event type' });
  }

  let heartbeatSeconds = settings.heartbeatDefaultSeconds;
  const hb = seen.get('heartbeat');
  if (hb) {
    const raw = hb[hb.length - 1]!.trim();
    const n = raw === '' ? Number.NaN : Number(raw);
    if (hb.length > 1) problems.push({ field: 'heartbeat', reason: 'not_allowed', message: 'is given more than once' });
    else if (!Number.isFinite(n) || n < 0) problems.push({ field: 'heartbeat', reason: 'invalid_type', message: 'must be a number of seconds' });
    else if (n > settings.heartbeatMaxSeconds) problems.push({ field: 'heartbeat', reason: 'out_of_range', message: `must be at most ${settings.heartbeatMaxSeconds} seconds` });
    else heartbeatSeconds = Math.max(settings.heartbeatDefaultSeconds, n);
  }

  const filter = parseStreamFilter(filterPairs, problems);
  const ids = seen.get('last_event_id');
  const lastEventId = ids?.[ids.length - 1]?.trim() || undefined;
  return { types: types.length > 0 ? types : [...MEMORY_EVENT_TYPES], filter, heartbeatSeconds, lastEventId };
}
