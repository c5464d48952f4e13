import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { describe, expect, it } from 'vitest';
import { createTiktokenCounter } from '../../src/adapters/tokenizer/tiktoken.counter.ts';
import { ONE_MIB, runOfEmoji, runOfMixedScripts, runOfX } from '../support/big-texts.ts';

/** js-tiktoken itself: the reference for exact counts (quadratic in a piece, so only on short texts). */
const reference = new Tiktoken(cl100k);
const referenceCount = (text: string): number => reference.encode(text, 'all').length;

describe('cl100k_base token counter', () => {
  const counter = createTiktokenCounter();

  it('counts ordinary text as js-tiktoken does', async () => {
    expect(counter.name).toBe('cl100k_base');
    expect(await counter.count('hello world')).toBe(2);
    expect(await counter.count('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(await counter.count('')).toBe(0);
    for (const text of [
      'Mnemo remembers things.', 'We deploy with blue/green on Fridays\n\n  - step 1: 12345678 tokens?!',
      "don't stop, it's 3.14159 — naïve café, 東京都 and Москва; مرحبا بالعالم 👍🏽🚀", '  leading and trailing  \n\n',
      'a<|endoftext|>b <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|> <|endofprompt|>', '\r\n\r\n\t\t x \u00a0\u2028',
      'lone surrogates \ud800 and \udfff, a pair 😀 and \ud83d at the end\ud83d',
    ]) {
      expect(await counter.count(text), text).toBe(referenceCount(text));
    }
  });

  it('counts long runs exactly, past the short-piece path (single pieces of 33 to 400 bytes)', async () => {
    const units = ['x', 'ab', ' ', '\n', '!', '-', '=', '7', 'é', '中', '😀', 'e\u0301', '👩‍💻', 'ئ', 'ж'];
    for (const unit of units) {
      for (const times of [33, 129, 400]) {
        const text = unit.repeat(Math.ceil(times / Buffer.byteLength(unit)));
        expect(await counter.count(text), `${JSON.stringify(unit)} × ${times}`).toBe(referenceCount(text));
      }
    }
  });

  it('agrees with js-tiktoken on arbitrary text (property)', async () => {
    const pieces = ['x', 'xx', 'the', ' ', '  ', '\n', '\r\n', '\t', '.', '!!', '--', '==', '1', '42', '007', "'s", "'ll",
      'é', '中', '文', 'ب', 'я', '😀', '👍🏽', '\u0301', '\u200d', '\ud800', '<|endoftext|>', '<|', '|>', 'Hello', 'WORLD'];
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 120 }),
      async (parts) => {
        const text = parts.join('');
        expect(await counter.count(text)).toBe(referenceCount(text));
      },
    ), { numRuns: 200 });
  });

  it('counts 1 MiB without spaces, of emoji and of mixed scripts each in a few seconds of CPU at most (not quadratic)', async () => {
    await counter.count('load the vocabulary first');
    for (const [name, text] of [['x', runOfX()], ['emoji', runOfEmoji()], ['mixed scripts', runOfMixedScripts()]] as const) {
      expect(Buffer.byteLength(text)).toBe(ONE_MIB);
      // A guard against quadratic counting (js-tiktoken's own merge is quadratic in a piece: on one 1 MiB piece, far
      // beyond this bound), not a speed target: the counter takes a few hundred milliseconds on an idle machine, and
      // this process's CPU time also holds its other threads (the suite's files share the process); a loaded CI run
      // measured 1.14 s against the bound of 1 s this had.
      const before = process.cpuUsage();
      const tokens = await counter.count(text);
      const used = process.cpuUsage(before);
      const ms = (used.user + used.system) / 1000;
      expect(ms, `${name}: ${ms.toFixed(0)} ms`).toBeLessThan(5000);
      // At least one token per 128 bytes (the longest cl100k token), at most one per byte.
      expect(tokens).toBeGreaterThanOrEqual(ONE_MIB / 128);
      expect(tokens).toBeLessThanOrEqual(ONE_MIB);
    }
  });
});
