import { describe, expect, it } from 'vitest';
import { createSearchAdmission } from '../../src/core/search/search-admission.ts';

describe('search admission', () => {
  it('runs maxActive at once, admits waiters in arrival order, refuses past the line, and drops an aborted waiter', async () => {
    const gate = createSearchAdmission({ maxActive: 1, maxQueued: 2, retryAfterMs: 1500 });
    const first = await gate.enter();
    const order: string[] = [];
    const abandon = new AbortController();
    const second = gate.enter().then((release) => { order.push('second'); return release; });
    const gaveUp = gate.enter(abandon.signal);
    await expect(gate.enter()).rejects.toMatchObject({ code: 'OVERLOADED', details: { retryAfterMs: 1500 } });

    abandon.abort(new Error('deadline'));
    await expect(gaveUp).rejects.toThrow('deadline');
    expect([gate.active, gate.waiting]).toEqual([1, 1]);
    const third = gate.enter().then((release) => { order.push('third'); return release; });

    first();
    first(); // releasing twice frees one slot only
    (await second)();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    expect([gate.active, gate.waiting]).toEqual([0, 0]);
  });
});
