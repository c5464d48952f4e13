import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { NewEvent, StoredEvent } from '../../src/core/events/event.types.ts';
import { newEventId } from '../../src/core/events/memory-events.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { createEventHub, type EventHub } from '../../src/core/streams/event-hub.ts';
import { sleep } from './support.ts';

const scope = { tenantId: 'acme', mode: 'live' as const, workspace: 'default' };
const evt = (n: number, over: Partial<NewEvent> = {}): NewEvent => ({
  id: newEventId(), type: 'memory.created', scope: { ...scope }, createdAt: new Date(), data: { n }, ...over,
});

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

describe('event hub (the log tail behind every stream)', () => {
  let dir: string;
  let storage: Storage;
  let hub: EventHub;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mnemo-hub-'));
    storage = createSqliteStorage({ file: join(dir, 'm.db') });
    hub = createEventHub({ events: storage.events, pollMs: 20 });
  });
  afterEach(async () => {
    hub.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const collect = async (options: { afterSeq?: number; types?: string[]; workspace?: string } = {}) => {
    const got: StoredEvent[] = [];
    const tail = await hub.subscribe({
      ...scope, workspace: options.workspace ?? scope.workspace, types: options.types ?? ['memory.created', 'system.health'], afterSeq: options.afterSeq,
      deliver: (page) => { got.push(...page); },
    });
    return { got, tail };
  };

  it('delivers what is appended after it starts, in order, page after page, within its scope and types', async () => {
    await storage.events.append([evt(-1)]);
    const { got } = await collect();
    const many = Array.from({ length: 250 }, (_, i) => evt(i));
    await storage.events.append(many);
    await storage.events.append([evt(0, { scope: { ...scope, tenantId: 'globex' } }), evt(0, { type: 'memory.deleted' }), evt(0, { scope: { ...scope, workspace: 'w2' } })]);
    await storage.events.append([evt(999, { type: 'system.health', scope: { tenantId: null, mode: null, workspace: null } })]);
    await until(() => got.length === 251);
    expect(got.map((e) => e.data.n)).toEqual([...Array.from({ length: 250 }, (_, i) => i), 999]);
    // Positive control: a later event in scope arrives right after, so nothing else (out of scope) came in between.
    await storage.events.append([evt(1000)]);
    await until(() => got.length >= 252);
    expect(got.slice(251).map((e) => e.data.n)).toEqual([1000]);
  });

  it('replays from a seq, then goes on live without a gap or a duplicate', async () => {
    const before = await storage.events.append([evt(1), evt(2), evt(3)]);
    const { got } = await collect({ afterSeq: before[0]!.seq });
    const writing = (async () => { for (let i = 4; i <= 40; i++) await storage.events.append([evt(i)]); })();
    await writing;
    await until(() => got.length === 39);
    expect(got.map((e) => e.data.n)).toEqual(Array.from({ length: 39 }, (_, i) => i + 2));
  });

  it('sees events written by another process on the same database (poll)', async () => {
    const { got } = await collect();
    const other = createSqliteStorage({ file: join(dir, 'm.db') });
    try {
      await other.events.append([evt(7)]);
      await until(() => got.length === 1, 2000);
      expect(got[0]!.data.n).toBe(7);
      // Interleaved writes of both processes still arrive in log order.
      await other.events.append([evt(8)]);
      await storage.events.append([evt(9)]);
      await until(() => got.length === 3, 2000);
      expect(got.map((e) => e.data.n)).toEqual([7, 8, 9]);
    } finally {
      await other.close();
    }
  });

  it('catches up from far behind in bounded reads, with turns of the event loop between them', async () => {
    // Another tenant's events, then ours of a type the subscriber drops, then ours it wants.
    await storage.events.append(Array.from({ length: 4000 }, (_, i) => evt(i, { scope: { ...scope, tenantId: 'globex' } })));
    await storage.events.append(Array.from({ length: 2000 }, (_, i) => evt(i, { type: 'memory.deleted' })));
    await storage.events.append(Array.from({ length: 450 }, (_, i) => evt(i)));
    const reads: { afterSeq: number; uptoSeq: number | undefined; limit: number }[] = [];
    const spied: typeof storage.events = {
      ...storage.events,
      readAfter: (q) => {
        reads.push({ afterSeq: q.afterSeq, uptoSeq: q.uptoSeq, limit: q.limit });
        return storage.events.readAfter(q);
      },
    };
    const farHub = createEventHub({ events: spied, pollMs: 1000 });
    let turns = 0;
    let turning = true;
    const turn = (): void => {
      if (!turning) return;
      turns++;
      setImmediate(turn);
    };
    try {
      const got: StoredEvent[] = [];
      setImmediate(turn);
      await farHub.subscribe({ ...scope, types: ['memory.created'], afterSeq: 0, deliver: (page) => { got.push(...page); } });
      await until(() => got.length === 450);
      turning = false;
      expect(got.map((e) => e.data.n)).toEqual(Array.from({ length: 450 }, (_, i) => i));
      // Every read is bounded in seqs and in events, and the event loop turned between them (it would not, were the
      // reads only chained promises: the SQLite adapter answers synchronously).
      for (const r of reads) {
        expect(r.uptoSeq! - r.afterSeq).toBeGreaterThan(0);
        expect(r.uptoSeq! - r.afterSeq).toBeLessThanOrEqual(2000);
        expect(r.limit).toBeLessThanOrEqual(200);
      }
      expect(reads.length).toBeGreaterThan(4);
      expect(turns).toBeGreaterThanOrEqual(reads.length - 1);
    } finally {
      turning = false;
      farHub.close();
    }
  });

  it('stops delivering when stopped or when deliver answers false', async () => {
    const { got, tail } = await collect();
    await storage.events.append([evt(1)]);
    await until(() => got.length === 1);
    tail.stop();
    await storage.events.append([evt(2)]);
    const pages: number[] = [];
    await hub.subscribe({ ...scope, types: ['memory.created'], afterSeq: 0, deliver: (page) => { pages.push(page.length); return false; } });
    // Positive control: a live subscriber sees a later event, so the hub has handed it to every subscriber it still has.
    const control = await collect();
    await storage.events.append([evt(3)]);
    await until(() => control.got.length === 1);
    expect(got).toHaveLength(1);
    expect(pages).toEqual([2]);
    control.tail.stop();
    expect(hub.size).toBe(0);

  });
});
