import type { Clock } from '../clock.ts';
import { DomainError, type FieldProblem } from '../errors.ts';
import { isUuid, newUuid } from '../ids.ts';
import type { MemoryStore } from '../memories/memory.repository.ts';
import { checkMetadata, throwIfProblems } from '../memories/memory.rules.ts';
import type { ListQuery } from '../memories/memory.types.ts';
import type { Scope } from '../scope.ts';
import type { TopicRepository } from './topic.repository.ts';
import { MAX_TOPIC_DESCRIPTION, MAX_TOPIC_NAME, type NewTopicInput, type Topic, type TopicPatch } from './topic.types.ts';

export interface TopicWithCount extends Topic { memoryCount: number }
export interface TopicNode extends TopicWithCount { children: TopicNode[] }

export type TopicService = ReturnType<typeof createTopicService>;

export function createTopicService(deps: { topics: TopicRepository; memories: Pick<MemoryStore, 'countByTopic' | 'list'>; clock: Clock }) {
  const { topics, memories, clock } = deps;
  const notFound = () => new DomainError('NOT_FOUND', 'Topic not found', { resource: 'topic' });

  function checkFields(input: TopicPatch, problems: FieldProblem[]): void {
    if (input.name !== undefined) {
      if (input.name.trim().length === 0) problems.push({ field: 'name', reason: 'empty', message: 'must not be empty' });
      else if ([...input.name].length > MAX_TOPIC_NAME) problems.push({ field: 'name', reason: 'too_long', message: `must be at most ${MAX_TOPIC_NAME} characters` });
    }
    if (input.description && input.description.length > MAX_TOPIC_DESCRIPTION) {
      problems.push({ field: 'description', reason: 'too_long', message: `must be at most ${MAX_TOPIC_DESCRIPTION} characters` });
    }
    if (input.metadata !== undefined) checkMetadata(input.metadata, problems);
  }

  async function requireParent(scope: Scope, parentId: string | null | undefined, problems: FieldProblem[]): Promise<void> {
    if (parentId === null || parentId === undefined) return;
    if (!isUuid(parentId) || !(await topics.findById(scope, parentId.toLowerCase()))) problems.push({ field: 'parent_id', reason: 'not_found', message: 'no such topic' });
  }

  async function withCounts(scope: Scope, list: Topic[]): Promise<TopicWithCount[]> {
    const counts = await memories.countByTopic(scope, list.map((t) => t.id));
    return list.map((t) => ({ ...t, memoryCount: counts.get(t.id) ?? 0 }));
  }

  async function get(scope: Scope, id: string): Promise<TopicWithCount> {
    const topic = isUuid(id) ? await topics.findById(scope, id.toLowerCase()) : null;
    if (!topic) throw notFound();
    return (await withCounts(scope, [topic]))[0]!;
  }

  return {
    get,

    /** For memory writes: a topic_id must name a topic of the caller's scope. */
    async assertExists(scope: Scope, topicId: string | null | undefined, field = 'topic_id'): Promise<void> {
      if (topicId === null || topicId === undefined) return;
      if (!isUuid(topicId) || !(await topics.findById(scope, topicId.toLowerCase()))) {
        throw new DomainError('VALIDATION_FAILED', 'Unknown topic', { fields: [{ field, reason: 'not_found', message: 'no such topic' }] });
      }
    },

    async create(scope: Scope, actorId: string, input: NewTopicInput): Promise<TopicWithCount> {
      const problems: FieldProblem[] = [];
      checkFields(input, problems);
      await requireParent(scope, input.parentId, problems);
      throwIfProblems(problems);
      const now = clock.now();
      const topic: Topic = {
        id: newUuid(), scope, name: input.name.trim(), description: input.description ?? null,
        parentId: input.parentId?.toLowerCase() ?? null, metadata: input.metadata ?? {}, createdAt: now, updatedAt: now,
        createdBy: actorId,
      };
      await topics.insert(topic);
      return { ...topic, memoryCount: 0 };
    },

    async list(scope: Scope, page: { limit: number; offset: number }): Promise<{ items: TopicWithCount[]; total: number }> {
      const { items, total } = await topics.list(scope, page);
      return { items: await withCounts(scope, items), total };
    },

    /** The whole tree of the scope: roots in creation order, each with its children. */
    async hierarchy(scope: Scope): Promise<TopicNode[]> {
      const all = await withCounts(scope, await topics.listAll(scope));
      const nodes = new Map(all.map((t) => [t.id, { ...t, children: [] as TopicNode[] }]));
      const roots: TopicNode[] = [];
      for (const node of nodes.values()) {
        const parent = node.parentId ? nodes.get(node.parentId) : undefined;
        (parent ? parent.children : roots).push(node);
      }
      return roots;
    },

    async update(scope: Scope, id: string, patch: TopicPatch): Promise<TopicWithCount> {
      const current = await get(scope, id);
      const problems: FieldProblem[] = [];
      checkFields(patch, problems);
      if (Object.values(patch).every((v) => v === undefined)) problems.push({ field: 'body', reason: 'empty', message: 'at least one field to update is required' });
      await requireParent(scope, patch.parentId, problems);
      if (patch.parentId) {
        // Walking up from the new parent must never reach this topic, or the tree would become a cycle.
        const all = new Map((await topics.listAll(scope)).map((t) => [t.id, t]));
        for (let at: string | null = patch.parentId.toLowerCase(); at; at = all.get(at)?.parentId ?? null) {
          if (at === current.id) {
            problems.push({ field: 'parent_id', reason: 'conflict', message: 'would make the topic its own ancestor' });
            break;
          }
        }
      }
      throwIfProblems(problems);
      const clean = { ...patch, name: patch.name?.trim(), parentId: patch.parentId === undefined ? undefined : patch.parentId?.toLowerCase() ?? null };
      const updated = await topics.update(scope, current.id, clean, clock.now());
      if (!updated) throw notFound();
      return (await withCounts(scope, [updated]))[0]!;
    },

    async delete(scope: Scope, id: string): Promise<{ id: string; deletedAt: Date }> {
      const topic = await get(scope, id);
      if (!(await topics.delete(scope, topic.id))) throw notFound();
      return { id: topic.id, deletedAt: clock.now() };
    },

    async memoriesOf(scope: Scope, id: string, query: Omit<ListQuery, 'filter'>) {
      const topic = await get(scope, id);
      return memories.list(scope, { ...query, filter: { topicId: topic.id } });
    },
  };
}
