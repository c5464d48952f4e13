import { randomUUID } from 'node:crypto';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import type { MemoryRepository } from '../../src/core/memories/memory.repository.ts';
import type { Scope } from '../../src/core/scope.ts';
import { memoryGenerator } from './corpus.ts';

/** A generated memory of `scope` as the server would store it, created now by `bench`. */
export function benchMemory(body: ReturnType<ReturnType<typeof memoryGenerator>>, scope: Scope): Memory {
  const at = new Date();
  return {
    id: randomUUID(), clientId: null, scope, title: body.title, content: body.content, memoryType: body.memory_type, tags: body.tags,
    metadata: {}, topicId: null, createdAt: at, updatedAt: at, createdBy: 'bench', updatedBy: 'bench', accessCount: 0, lastAccessed: null,
    validFrom: at, validUntil: null, supersededBy: null, version: 1,
  };
}

/**
 * Seeds generated memories straight into a store (no HTTP), 1,000 per atomic batch, each with the hashing vector of
 * its title and content as the server would embed them: corpora of 100k take a minute instead of a quarter hour.
 */
export async function seedStoreDirectly(memories: Pick<MemoryRepository, 'applyAtomically'>, scope: Scope, options: {
  /** Memories in the store when done. */
  size: number;
  dims: number;
  /** Memories already there (e.g. the one created over HTTP to name the scope). */
  from?: number;
  onProgress?: (done: number) => void;
}): Promise<void> {
  const next = memoryGenerator(42);
  const modelId = `hashing:v1-${options.dims}`;
  for (let done = options.from ?? 0; done < options.size;) {
    const n = Math.min(1000, options.size - done);
    const steps = Array.from({ length: n }, () => {
      const memory = benchMemory(next(), scope);
      return { kind: 'insert' as const, memory, vector: { modelId, vector: hashEmbed(`${memory.title}\n\n${memory.content}`, options.dims) } };
    });
    await memories.applyAtomically(scope, steps);
    done += n;
    options.onProgress?.(done);
  }
}
