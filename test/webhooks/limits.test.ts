import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRig, g10Hook, startReceiver, transferEvent, waitFor, type Receiver, type Rig } from './support.ts';

/** A receiver that holds every request open until told to answer, counting how many are open at once. */
async function holdingReceiver() {
  const held: ServerResponse[] = [];
  let open = 0;
  let maxOpen = 0;
  const receiver = await startReceiver((_q, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    res.on('finish', () => { open--; });
    held.push(res);
  });
  return {
    receiver,
    held,
    get maxOpen() { return maxOpen; },
    releaseAll() { for (const res of held.splice(0)) res.end(); },
  };
}

describe('delivery limits', () => {
  let rig: Rig;
  let receiver: Receiver;
  afterEach(async () => {
    await rig.close();
    await receiver.close();
  });

  describe('at most 5 concurrent deliveries per webhook', () => {
    let holder: Awaited<ReturnType<typeof holdingReceiver>>;
    beforeEach(async () => {
      holder = await holdingReceiver();
      receiver = holder.receiver;
      rig = createRig();
    });

    it('claims no more than 5 for a webhook while they are in flight', async () => {
      const hook = g10Hook(receiver.url);
      await rig.insert(hook);
      await rig.storage.events.append(Array.from({ length: 12 }, () => transferEvent(rig.clock)));

      const first = rig.worker.tick();
      await waitFor(() => holder.held.length === 5);
      // Another tick (another worker or node) gets nothing for this webhook while 5 are leased.
      expect(await rig.worker.tick()).toBe(0);
      holder.releaseAll();
      expect(await first).toBe(5);
      // Every attempt has ended: the first tick's five are all the receiver got.
      expect(receiver.received).toHaveLength(5);


      const second = rig.worker.tick();
      await waitFor(() => holder.held.length === 5);
      holder.releaseAll();
      expect(await second).toBe(5);
      const third = rig.worker.tick();
      await waitFor(() => holder.held.length === 2);
      holder.releaseAll();
      expect(await third).toBe(2);
      expect(holder.maxOpen).toBe(5);
      expect(await rig.storage.webhooks.pendingCount()).toBe(0);
    });

    it('keeps other webhooks flowing beside a slow one', async () => {
      await rig.insert(g10Hook(receiver.url));
      await rig.insert(g10Hook(receiver.url));
      await rig.storage.events.append(Array.from({ length: 8 }, () => transferEvent(rig.clock)));
      const tick = rig.worker.tick();
      await waitFor(() => holder.held.length === 10);
      holder.releaseAll();
      expect(await tick).toBe(10);
    });

    it('the running worker never exceeds 5 per webhook and delivers everything', async () => {
      let open = 0;
      let maxOpen = 0;
      receiver.respondWith((_q, res) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        setTimeout(() => { open--; res.end(); }, 20);
      });
      await rig.insert(g10Hook(receiver.url));
      rig.worker.start();
      await rig.storage.events.append(Array.from({ length: 23 }, () => transferEvent(rig.clock)));
      await waitFor(async () => (await rig.storage.webhooks.pendingCount()) === 0);
      expect(receiver.received).toHaveLength(23);
      expect(maxOpen).toBe(5);
    });
  });

  describe('at most N events per minute per webhook', () => {
    beforeEach(async () => { receiver = await startReceiver(); });

    it('postpones deliveries over the limit to the next window without counting an attempt', async () => {
      rig = createRig({ worker: { rateLimit: { limit: 3, windowMs: 60_000 } } });
      const hook = g10Hook(receiver.url);
      const other = g10Hook(receiver.url, { events: ['transfer.failed'] });
      await rig.insert(hook);
      await rig.insert(other);
      await rig.storage.events.append(Array.from({ length: 5 }, () => transferEvent(rig.clock)));
      await rig.storage.events.append([{ ...transferEvent(rig.clock), type: 'transfer.failed' }]);

      // 5 for `hook` claimed: 3 sent, 2 put back to the next minute; `other` has its own budget.
      expect(await rig.worker.tick()).toBe(4);
      const rows = rig.deliveryRows().filter((d) => d.webhook_id === hook.id);
      const windowEnd = rig.clock.now().getTime() + 60_000;
      expect(rows.filter((d) => d.state === 'succeeded')).toHaveLength(3);
      expect(rows.filter((d) => d.state === 'pending')).toMatchObject([
        { attempts: 0, next_attempt_at: windowEnd }, { attempts: 0, next_attempt_at: windowEnd },
      ]);
      rig.clock.advance(59_999);
      expect(await rig.worker.tick()).toBe(0);
      rig.clock.advance(1);
      expect(await rig.worker.tick()).toBe(2);
      expect(await rig.storage.webhooks.pendingCount()).toBe(0);
    });

    it('uses the spec default of 1000 a minute', async () => {
      rig = createRig();
      await rig.insert(g10Hook(receiver.url));
      await rig.storage.events.append(Array.from({ length: 1003 }, () => transferEvent(rig.clock)));
      let sent = 0;
      for (let n = await rig.worker.tick(); n > 0; n = await rig.worker.tick()) sent += n;
      expect(sent).toBe(1000);
      expect(await rig.storage.webhooks.pendingCount()).toBe(3);
      rig.clock.advance(60_000);
      expect(await rig.worker.tick()).toBe(3);
      expect(receiver.received).toHaveLength(1003);
    }, 60_000);
  });
});
