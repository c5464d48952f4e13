import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/core/events/event.types.ts';
import { newEventId } from '../../src/core/events/memory-events.ts';
import { bearer, openStream, sleep, startLiveApp, until, type LiveApp, type SseClient } from './support.ts';

/** The bound of test/hardening/big-inputs-event-loop.test.ts: no request may hold every other user's loop longer. */
const MAX_STALL_MS = 300;
/** Events of the resuming tenant after the resume point (the attack run had about 19 000). */
const TAIL = 20_000;
/** Events of another tenant written in the middle of the tail: the replay reads past them. */
const FOREIGN = 4_000;
/** One event in RARE carries the tag the filtered streams ask for. */
const RARE = 100;
const SHED_SAMPLE_MS = 500;

/**
 * Five streams of one key resume from a point 20 000 events back (the attack of issue 35), three of them with a
 * filter that drops 99 % of those events, while another tenant keeps sending requests: the replay goes in bounded
 * reads that yield to the event loop, so the loop stays free (no 503 from load shedding, no stall past the bound),
 * and the replay stays lossless and in order up to the per-minute event limit.
 */
describe('a stream resume far back never stalls the server (G8)', () => {
  let t: LiveApp;
  let key: string;
  let otherKey: string;
  let resumeId: string;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    // Load shedding at its production limit: a stall of the loop answers everyone 503. Sampled every 500 ms, longer
    // than any stall within the bound (a sample window in which the loop never ticked reads as an infinite delay).
    t = await startLiveApp({}, { MNEMO_MAX_EVENT_LOOP_DELAY_MS: '1000' }, { pressureSampleMs: SHED_SAMPLE_MS });
    const listening = performance.now();
    key = await t.key({ tenant: 'replayer' });
    otherKey = await t.key({ tenant: 'bystander' });
    const scope = { tenantId: 'replayer', mode: 'live' as const, workspace: 'default' };
    const created = (n: number, tenantId = scope.tenantId): NewEvent => ({
      id: `evt_${tenantId}${n}`, type: 'memory.created', scope: { ...scope, tenantId }, createdAt: new Date(),
      data: { object: 'memory', id: `mem_${n}`, n, tags: [n % RARE === 0 ? 'rare' : 'common'], metadata: {}, memory_type: 'fact' },
    });
    const [point] = await t.container.storage.events.append([{ ...created(-1), id: newEventId() }]);
    resumeId = point!.id;
    // In batches, with a turn of the loop after each, so that the seeding's own stalls are over before the test.
    const append = async (events: NewEvent[]) => {
      await t.container.storage.events.append(events);
      await sleep(0);
    };
    const batch = 1000;
    for (let from = 0; from < TAIL; from += batch) {
      await append(Array.from({ length: batch }, (_, i) => created(from + i)));
      if (from === TAIL / 2) {
        for (let f = 0; f < FOREIGN; f += batch) await append(Array.from({ length: batch }, (_, i) => created(f + i, 'bystander')));
      }
    }
    // Shedding starts two samples after listening; the last sample must not hold the seeding.
    await sleep(listening + 2 * SHED_SAMPLE_MS + 50 - performance.now());
    await until(() => !t.app.isUnderPressure(), 2 * SHED_SAMPLE_MS);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await t.close();
  });

  it('replays 20 000 events to five streams of one key with the loop free and nothing lost, out of order or over the limit', async () => {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    const statuses: number[] = [];
    let replaying = true;
    histogram.enable();
    try {
      // Another tenant's requests, one after another, for as long as the replay runs.
      const bystander = (async () => {
        while (replaying) {
          const res = await fetch(`${t.url}/api/v1/memories?limit=5`, { headers: { 'x-api-key': otherKey } });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
      })();
      const resume = { ...bearer(key), 'last-event-id': resumeId };
      const opened = await Promise.all([
        openStream(`${t.url}/api/v1/stream`, resume),
        openStream(`${t.url}/api/v1/stream?events=memory.created&filters[tags]=rare`, resume),
        openStream(`${t.url}/api/v1/stream`, resume),
        openStream(`${t.url}/api/v1/stream?events=memory.created&filters[tags]=rare`, resume),
        openStream(`${t.url}/api/v1/stream?events=memory.created&filters[tags]=rare`, resume),
      ]);
      streams.push(...opened);
      const [all1, rare1, all2, rare2, rare3] = opened;
      try {
        // A filtered stream has replayed everything once the tail's last rare event arrives (it stays open, live).
        await Promise.all([
          ...[all1!, all2!].map((s) => s.ended),
          ...[rare1!, rare2!, rare3!].map((s) => Promise.race([s.ended, s.waitFor((f) => f.data?.n === TAIL - RARE, 20_000)])),
        ]);
      } finally {
        replaying = false;
        await bystander;
      }
    } finally {
      histogram.disable();
    }
    const stallMs = histogram.max / 1e6;
    if (process.env.STALL_DEBUG) process.stderr.write(`longest stall ${stallMs.toFixed(1)} ms, ${statuses.length} bystander requests\n`);
    expect(stallMs, `longest event-loop stall: ${stallMs.toFixed(1)} ms`).toBeLessThan(MAX_STALL_MS);
    for (const s of streams) expect(s.status, s.text().slice(0, 300)).toBe(200);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    const [all1, rare1, all2, rare2, rare3] = streams;
    const perMinute = t.container.realtime.maxEventsPerMinute;
    const replayed = (s: SseClient, from: number) => {
      // Exactly the next events of the log, in order, then RATE_LIMITED and the end of the stream.
      const events = s.events();
      expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'RATE_LIMITED', retry_after: 60000 } });
      expect(events.slice(0, -1).map((f) => f.data!.n)).toEqual(Array.from({ length: perMinute }, (_, i) => from + i));
      return events.at(-2)!.id!;
    };
    const lastId = replayed(all1!, 0);
    expect(replayed(all2!, 0)).toBe(lastId);
    // Every event the filter selects, the other tenant's skipped, in order, none twice.
    const rare = Array.from({ length: TAIL / RARE }, (_, i) => i * RARE);
    for (const s of [rare1!, rare2!, rare3!]) {
      expect(s.events().map((f) => [f.event, f.data!.n])).toEqual(rare.map((n) => ['memory.created', n]));
    }
    // Reconnecting with the last event received continues the replay right after it.
    const again = await openStream(`${t.url}/api/v1/stream`, { ...bearer(key), 'last-event-id': lastId });
    streams.push(again);
    await again.ended;
    replayed(again, perMinute);
  });
});
