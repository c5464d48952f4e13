import type { MemoryRef } from '../../core/memories/memory.types.ts';

/**
 * Both stores hand out a memory's row number (`seq`) as its MemoryRef: the rankings have it without a lookup and a
 * row is read by primary key. A ref that is not a row number names no memory of theirs and is dropped.
 */
export function seqsOf(refs: readonly MemoryRef[]): number[] {
  return refs.filter((ref): ref is number => Number.isSafeInteger(ref));
}
