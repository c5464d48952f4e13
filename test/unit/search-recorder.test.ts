import { describe, expect, it } from 'vitest';
import { afterFlush, createSearchRecorder } from '../../src/core/search/search-recorder.ts';
import type { SearchLogEntry } from '../../src/core/search/search-log.ts';
import type { NewEvent } from '../../src/core/events/event.types.ts';

const entry = (query: string, workspace = 'w'): SearchLogEntry => ({
  scope: { tenantId: 't', mode: 'live', workspace }, userId: 'u', surface: 'g1', kind: 'semantic', query,
  resultsCount: 1, executionMs: 1, avgScore: 0.5, filters: {}, at: new Date(0),
});

function rig(options: { failFirst?: boolean; maxBatch?: number; delayMs?: number } = {}) {
  const batches: string[][] = [];
  const events: string[][] = [];
  const warnings: string[] = [];
  let fail = options.failFirst ?? false;
  const recorder = createSearchRecorder({
    searchLog: { appendMany: async (entries) => {
      if (fail) { fail = false; throw new Error('disk full'); }
      batches.push(entries.map((e) => e.query));
    } },
    events: { append: async (list: NewEvent[]) => { events.push(list.map((e) => String(e.data['query']))); return []; } },
    warnings: { warn: (_details, message) => { warnings.push(message); } },
    delayMs: options.delayMs ?? 5, maxBatch: options.maxBatch,
  });
  return { recorder, batches, events, warnings };
}

describe('search recorder', () => {
  it('writes the searches recorded close together as one batch, log rows and events alike, in order', async () => {
    const r = rig();
    r.recorder.record(entry('a'));
    r.recorder.record(entry('b'));
    expect(r.batches).toEqual([]); // nothing written on the search's path
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(r.batches).toEqual([['a', 'b']]);
    expect(r.events).toEqual([['a', 'b']]);
  });

  it('writes a full batch at once, and flush() writes the rest', async () => {
    const r = rig({ maxBatch: 2 });
    ['a', 'b', 'c'].forEach((q) => r.recorder.record(entry(q)));
    await r.recorder.flush();
    expect(r.batches).toEqual([['a', 'b'], ['c']]);
    await r.recorder.flush(); // nothing left: no empty batch
    expect(r.batches).toHaveLength(2);
  });

  it('reports a failed batch as a warning and goes on with the next', async () => {
    const r = rig({ failFirst: true });
    r.recorder.record(entry('lost'));
    await r.recorder.flush();
    r.recorder.record(entry('kept'));
    await r.recorder.flush();
    expect(r.warnings).toHaveLength(1);
    expect(r.batches).toEqual([['kept']]);
    // The log write failed, not the events: the lost search's search.performed is still in the outbox.
    expect(r.events).toEqual([['lost'], ['kept']]);
  });

  it('flushFor(scope) writes the queue only when a search of that scope waits in it', async () => {
    const r = rig({ delayMs: 60_000 }); // no timer fires during the test
    r.recorder.record(entry('in w'));
    await r.recorder.flushFor({ tenantId: 't', mode: 'live', workspace: 'other' });
    await r.recorder.flushFor({ tenantId: 't', mode: 'test', workspace: 'w' });
    await r.recorder.flushFor({ tenantId: 'u', mode: 'live', workspace: 'w' });
    expect(r.batches).toEqual([]); // readers of other scopes cost no commit
    r.recorder.record(entry('in other', 'other'));
    await r.recorder.flushFor({ tenantId: 't', mode: 'live', workspace: 'w' });
    expect(r.batches).toEqual([['in w', 'in other']]); // the whole queue, in order
    await r.recorder.flush();
    expect(r.batches).toHaveLength(1);
  });

  it('afterFlush makes a reader wait for the searches recorded before it asked', async () => {
    const r = rig();
    const reader = afterFlush({ count: async () => r.batches.flat().length, label: 'x' }, r.recorder.flush);
    r.recorder.record(entry('a'));
    expect(await reader.count()).toBe(1);
    expect(reader.label).toBe('x');
  });
});
