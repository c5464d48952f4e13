import { tool } from 'ai';
import { z } from 'zod';
import type { MnemoClient } from 'mnemo/client';

export interface MnemoToolsOptions {
  /** Tags added to every memory the model stores (e.g. the user or the app), besides the ones it chooses. */
  tags?: string[];
  /** How many memories `recall` returns at most (default 5). */
  limit?: number;
  /** The lowest relevance `recall` keeps, 0-1 (default Mnemo's 0.7: relevant). */
  threshold?: number;
}

/**
 * Memory tools for the Vercel AI SDK: `remember` stores a memory, `recall` searches (hybrid: meaning and words),
 * `forget` deletes one by id. Pass them as `tools` to generateText or streamText; the client's key decides what the
 * model may do (a key with `memories:read` only makes `remember` and `forget` fail with the server's refusal).
 */
export function mnemoTools(client: MnemoClient, options: MnemoToolsOptions = {}) {
  const limit = options.limit ?? 5;
  return {
    remember: tool({
      description: 'Store a fact, preference or decision in long-term memory so it can be recalled later.',
      inputSchema: z.object({
        title: z.string().min(1).max(255).describe('A short title for the memory'),
        content: z.string().min(1).describe('What to remember, as a self-contained statement'),
        tags: z.array(z.string().min(1).max(100)).max(20).optional().describe('Tags to find it by'),
      }),
      execute: async ({ title, content, tags }) => {
        const created = await client.memories.create({ title, content, tags: [...(options.tags ?? []), ...(tags ?? [])] });
        return { id: created.data.id, title: created.data.title };
      },
    }),
    recall: tool({
      description: 'Search long-term memory for what is relevant to a question or topic.',
      inputSchema: z.object({ query: z.string().min(1).describe('What to look for') }),
      execute: async ({ query }) => {
        const found = await client.memories.hybrid({ query, topK: limit, ...(options.threshold === undefined ? {} : { threshold: options.threshold }) });
        return { memories: found.matches.map((m) => ({ id: m.id, title: m.title, content: m.text, score: m.score })) };
      },
    }),
    forget: tool({
      description: 'Delete a memory by its id (as returned by recall or remember).',
      inputSchema: z.object({ id: z.string().min(8).describe('The memory id') }),
      execute: async ({ id }) => {
        const deleted = await client.memories.delete(id);
        return { id: deleted.data.id, deleted: true };
      },
    }),
  };
}
