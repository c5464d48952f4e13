import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TopicNode } from '../../src/core/topics/topic.service.ts';
import { createServices, freshScope, actor, rejection, type Services } from './support.ts';

const MISSING = '00000000-0000-4000-8000-000000000000';

/** The tree as nested names: `{ name: [children…] }`. */
const shape = (nodes: readonly TopicNode[]): unknown[] =>
  nodes.map((n) => (n.children.length ? { [n.name]: shape(n.children) } : n.name));


describe('TopicService', () => {
  let s: Services;
  beforeAll(() => { s = createServices(); });
  afterAll(() => s.close());

  it('creates topics with a trimmed name, the clock time and no memories yet', async () => {
    const scope = freshScope();
    const t = await s.topics.create(scope, 'alice', { name: '  Projects ', description: 'Work', metadata: { color: 'blue' } });
    expect(t).toMatchObject({ name: 'Projects', description: 'Work', parentId: null, metadata: { color: 'blue' }, memoryCount: 0, createdBy: 'alice' });
    expect(t.createdAt.getTime()).toBe(s.clock.now().getTime());
    expect(await s.topics.get(scope, t.id.toUpperCase())).toEqual(t);
  });

  it('refuses bad fields and an unknown or foreign parent', async () => {
    const scope = freshScope();
    const foreign = await s.topics.create(freshScope(), 'mallory', { name: 'Theirs' });
    const e = await rejection(s.topics.create(scope, 'alice', { name: ' ', description: 'd'.repeat(2001), parentId: foreign.id }));
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.details.fields!.map((f) => f.field).sort()).toEqual(['description', 'name', 'parent_id']);
    expect((await rejection(s.topics.create(scope, 'alice', { name: 'x', parentId: 'not-a-uuid' }))).details.fields).toEqual([{ field: 'parent_id', reason: 'not_found', message: 'no such topic' }]);
    expect((await s.topics.list(scope, { limit: 10, offset: 0 })).total).toBe(0);
  });

  it('accepts a parent id in any case, as every other id (UUIDs are case-insensitive)', async () => {
    const scope = freshScope();
    const parent = await s.topics.create(scope, 'u', { name: 'Parent' });
    const child = await s.topics.create(scope, 'u', { name: 'Child', parentId: parent.id.toUpperCase() });
    expect(child.parentId).toBe(parent.id);
    const other = await s.topics.create(scope, 'u', { name: 'Other' });
    expect((await s.topics.update(scope, child.id, { parentId: other.id.toUpperCase() })).parentId).toBe(other.id);
  });

  it('refuses a second topic of the same name under the same parent, allows it under another', async () => {
    const scope = freshScope();
    const a = await s.topics.create(scope, 'u', { name: 'A' });
    const b = await s.topics.create(scope, 'u', { name: 'B' });
    await s.topics.create(scope, 'u', { name: 'Notes', parentId: a.id });
    expect((await rejection(s.topics.create(scope, 'u', { name: 'Notes', parentId: a.id }))).code).toBe('CONFLICT');
    await expect(s.topics.create(scope, 'u', { name: 'Notes', parentId: b.id })).resolves.toMatchObject({ parentId: b.id });
    expect((await rejection(s.topics.create(scope, 'u', { name: 'A' }))).code).toBe('CONFLICT');
  });

  it('builds the hierarchy of the caller\'s scope: roots in creation order, each with its children and memory counts', async () => {
    const scope = freshScope();
    const work = await s.topics.create(scope, 'u', { name: 'Work' });
    const home = await s.topics.create(scope, 'u', { name: 'Home' });
    const alpha = await s.topics.create(scope, 'u', { name: 'Alpha', parentId: work.id });
    await s.topics.create(scope, 'u', { name: 'Specs', parentId: alpha.id });
    await s.topics.create(scope, 'u', { name: 'Garden', parentId: home.id });
    await s.topics.create(freshScope(), 'u', { name: 'Elsewhere' });
    await s.memories.create(scope, actor(scope, 'u'), { title: 'm1', content: 'c', topicId: alpha.id });
    await s.memories.create(scope, actor(scope, 'u'), { title: 'm2', content: 'c', topicId: alpha.id });

    const tree = await s.topics.hierarchy(scope);
    expect(shape(tree)).toEqual([{ Work: [{ Alpha: ['Specs'] }] }, { Home: ['Garden'] }]);
    expect(tree[0]!.children[0]!.memoryCount).toBe(2);
    expect(tree[0]!.memoryCount).toBe(0); // counts are per topic, not rolled up
    expect((await s.topics.memoriesOf(scope, alpha.id, { limit: 10, offset: 0, sortBy: 'title', sortOrder: 'asc' })).items.map((m) => m.title)).toEqual(['m1', 'm2']);
  });

  describe('update', () => {
    it('moves a topic under another and refuses any move that would make a cycle', async () => {
      const scope = freshScope();
      const a = await s.topics.create(scope, 'u', { name: 'A' });
      const b = await s.topics.create(scope, 'u', { name: 'B', parentId: a.id });
      const c = await s.topics.create(scope, 'u', { name: 'C', parentId: b.id });
      const other = await s.topics.create(scope, 'u', { name: 'Other' });

      for (const [topic, parent] of [[a, a], [a, b], [a, c], [b, c]] as const) {
        const e = await rejection(s.topics.update(scope, topic.id, { parentId: parent.id.toUpperCase() }));
        expect(e.code).toBe('VALIDATION_FAILED');
        expect(e.details.fields).toEqual([{ field: 'parent_id', reason: 'conflict', message: 'would make the topic its own ancestor' }]);
      }
      expect(shape(await s.topics.hierarchy(scope))).toEqual([{ A: [{ B: ['C'] }] }, 'Other']);

      s.clock.advance(1000);
      const moved = await s.topics.update(scope, b.id, { parentId: other.id });
      expect(moved.updatedAt.getTime()).toBe(s.clock.now().getTime());
      // Now C is no longer under A, so A may go under C.
      await s.topics.update(scope, a.id, { parentId: c.id });
      expect(shape(await s.topics.hierarchy(scope))).toEqual([{ Other: [{ B: [{ C: ['A'] }] }] }]);
      // null makes a topic a root again.
      await s.topics.update(scope, b.id, { parentId: null });
      expect(shape(await s.topics.hierarchy(scope))).toEqual([{ B: [{ C: ['A'] }] }, 'Other']);
    });

    it('refuses an empty patch, and answers NOT_FOUND for another scope\'s topic', async () => {
      const scope = freshScope();
      const t = await s.topics.create(scope, 'u', { name: 'T' });
      expect((await rejection(s.topics.update(scope, t.id, {}))).details.fields).toEqual([{ field: 'body', reason: 'empty', message: 'at least one field to update is required' }]);
      expect((await rejection(s.topics.update(freshScope(), t.id, { name: 'Stolen' }))).code).toBe('NOT_FOUND');
      expect((await rejection(s.topics.update(scope, 'nope', { name: 'x' }))).code).toBe('NOT_FOUND');
      expect((await s.topics.update(scope, t.id, { name: ' Renamed ', description: null })).name).toBe('Renamed');
    });
  });

  describe('delete', () => {
    it('keeps the memories (without a topic) and moves child topics up to the deleted one\'s parent', async () => {
      const scope = freshScope();
      const root = await s.topics.create(scope, 'u', { name: 'Root' });
      const mid = await s.topics.create(scope, 'u', { name: 'Mid', parentId: root.id });
      await s.topics.create(scope, 'u', { name: 'Leaf1', parentId: mid.id });
      await s.topics.create(scope, 'u', { name: 'Leaf2', parentId: mid.id });
      const m = await s.memories.create(scope, actor(scope, 'u'), { title: 'In mid', content: 'c', topicId: mid.id });

      s.clock.advance(500);
      const { id, deletedAt } = await s.topics.delete(scope, mid.id);
      expect(id).toBe(mid.id);
      expect(deletedAt.getTime()).toBe(s.clock.now().getTime());
      expect(shape(await s.topics.hierarchy(scope))).toEqual([{ Root: ['Leaf1', 'Leaf2'] }]);
      expect((await s.memories.find(scope, m.id)).topicId).toBeNull();
      expect((await rejection(s.topics.get(scope, mid.id))).code).toBe('NOT_FOUND');
      expect((await rejection(s.topics.delete(scope, mid.id))).code).toBe('NOT_FOUND');
    });

    it('deleting a root makes its children roots; another scope cannot delete it', async () => {
      const scope = freshScope();
      const root = await s.topics.create(scope, 'u', { name: 'Root' });
      await s.topics.create(scope, 'u', { name: 'Child', parentId: root.id });
      expect((await rejection(s.topics.delete(freshScope(), root.id))).code).toBe('NOT_FOUND');
      expect((await rejection(s.topics.delete(scope, MISSING))).code).toBe('NOT_FOUND');
      await s.topics.delete(scope, root.id);
      expect(shape(await s.topics.hierarchy(scope))).toEqual(['Child']);
    });
  });
});
