import type { Scope } from '../scope.ts';
import type { Topic, TopicPatch } from './topic.types.ts';

/** Storage port for topics; every method stays inside the caller's scope. */
export interface TopicRepository {
  /** A name already used under the same parent is a DomainError CONFLICT. */
  insert(topic: Topic): Promise<void>;
  findById(scope: Scope, id: string): Promise<Topic | null>;
  /** Every topic of the scope, oldest first (topics are few; hierarchy is built from this). */
  listAll(scope: Scope): Promise<Topic[]>;
  list(scope: Scope, page: { limit: number; offset: number }): Promise<{ items: Topic[]; total: number }>;
  update(scope: Scope, id: string, patch: TopicPatch, at: Date): Promise<Topic | null>;
  /**
   * Deletes a topic in one transaction: its memories keep existing without a topic, its child topics move up to
   * its parent. False when absent.
   */
  delete(scope: Scope, id: string): Promise<boolean>;
}
