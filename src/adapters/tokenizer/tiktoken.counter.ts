import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import type { TokenCounter } from '../../core/embeddings/token-counter.port.ts';

/** OpenAI's cl100k_base BPE (the tokenizer of its embedding models), from js-tiktoken's bundled ranks. */
export function createTiktokenCounter(): TokenCounter {
  let encoder: Tiktoken | undefined;
  return {
    name: 'cl100k_base',
    count(text) {
      // Built on first use: loading the ranks takes ~100 ms and most processes never need them.
      encoder ??= new Tiktoken(cl100k);
      return encoder.encode(text, 'all').length;
    },
  };
}
