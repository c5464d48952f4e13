import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryClient, type CoreMemoryClient } from '@lanonasis/memory-client';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Every method of the published client @lanonasis/memory-client 2.2.0 that calls the server (22 of them), run
 * against a real Mnemo server on loopback, once with `apiKey` (sent as X-API-Key) and once with `authToken` (sent
 * as `Authorization: Bearer`; Mnemo takes the same API key there). Each call's returned data is checked.
 */
const CREDENTIALS = ['apiKey', 'authToken'] as const;

describe.each(CREDENTIALS)('@lanonasis/memory-client against Mnemo (%s)', (credential) => {
  let t: TestApp;
  let client: CoreMemoryClient;
  let origin: string;
  beforeAll(async () => {
    t = await createTestApp();
    const key = await t.freshTenant();
    origin = await t.app.listen({ host: '127.0.0.1', port: 0 });
    client = createMemoryClient({ apiUrl: origin, [credential]: key, retry: { maxRetries: 0 }, timeout: 20_000 });
  });
  afterAll(() => t.close());

  /** The data of a call that must succeed (its error, if any, shown on failure). */
  function ok<T>(res: { data?: T; error?: unknown }): T {
    expect(res.error, JSON.stringify(res.error)).toBeUndefined();
    expect(res.data).toBeDefined();
    return res.data!;
  }

  it('runs every call of the client and gets usable data back', async () => {
    // 1. healthCheck
    expect(ok(await client.healthCheck())).toMatchObject({ status: 'ok' });

    // 2-3. createTopic (with color, icon, parent_topic_id), getTopic
    const parent = ok(await client.createTopic({ name: 'Engineering', color: '#3366ff', icon: 'gear' }));
    expect(parent).toMatchObject({ name: 'Engineering', color: '#3366ff', icon: 'gear', parent_topic_id: null, is_system: false });
    const child = ok(await client.createTopic({ name: 'Releases', parent_topic_id: parent.id }));
    expect(child.parent_topic_id).toBe(parent.id);
    expect(ok(await client.getTopic(child.id))).toMatchObject({ id: child.id, name: 'Releases', parent_topic_id: parent.id });

    // 4. createMemory ({title, content, memory_type, tags, topic_id})
    const created = ok(await client.createMemory({
      title: 'Release process', content: 'We deploy with blue/green on Fridays', memory_type: 'workflow', tags: ['ops', 'deploy'], topic_id: child.id,
    }));
    expect(created).toMatchObject({ title: 'Release process', content: 'We deploy with blue/green on Fridays', memory_type: 'workflow', tags: ['ops', 'deploy'], topic_id: child.id });
    expect(created.id).toMatch(/^mem_/);

    // 5. createMemoryWithPreprocessing (preprocessing options are accepted and ignored)
    const second = ok(await client.createMemoryWithPreprocessing({
      title: 'Coffee', content: 'The office coffee machine is descaled every Monday', memory_type: 'knowledge', tags: ['office'],
      preprocessing: { chunking: { strategy: 'semantic', maxChunkSize: 1000 }, extractMetadata: true },
    }));
    expect(second).toMatchObject({ title: 'Coffee', memory_type: 'knowledge', tags: ['office'] });

    // 6. getMemory
    const got = ok(await client.getMemory(created.id));
    expect(got).toMatchObject({ id: created.id, title: 'Release process', content: 'We deploy with blue/green on Fridays', memory_type: 'workflow', access_count: 1 });

    // 7. updateMemory
    const updated = ok(await client.updateMemory(created.id, { title: 'Release process v2', tags: ['ops'] }));
    expect(updated).toMatchObject({ id: created.id, title: 'Release process v2', content: 'We deploy with blue/green on Fridays', tags: ['ops'] });

    // 8. updateMemoryWithPreprocessing
    const reworded = ok(await client.updateMemoryWithPreprocessing(second.id, { content: 'The office coffee machine is descaled every Tuesday', rechunk: true }));
    expect(reworded).toMatchObject({ id: second.id, title: 'Coffee', content: 'The office coffee machine is descaled every Tuesday' });
    expect(ok(await client.getMemory(second.id)).content).toBe('The office coffee machine is descaled every Tuesday');

    // 9. listMemories (page, limit, filters)
    const all = ok(await client.listMemories({ page: 1, limit: 10 }));
    expect(all.pagination).toMatchObject({ page: 1, limit: 10, total: 2, pages: 1 });
    expect(all.data.map((m) => m.id).sort()).toEqual([created.id, second.id].sort());
    const workflows = ok(await client.listMemories({ memory_type: 'workflow', tags: ['ops'] }));
    expect(workflows.data.map((m) => m.title)).toEqual(['Release process v2']);

    // 10. searchMemories (semantic)
    const found = ok(await client.searchMemories({ query: 'deploy blue/green Fridays', threshold: 0.5, limit: 5, status: 'active' }));
    expect(found.results[0]).toMatchObject({ id: created.id, title: 'Release process v2' });
    expect(found.results[0]!.similarity_score).toBeGreaterThan(0.5);
    expect(found.total_results).toBeGreaterThanOrEqual(1);
    expect(typeof found.search_time_ms).toBe('number');

    // 11. enhancedSearch (text mode: keyword)
    const enhanced = ok(await client.enhancedSearch({ query: 'coffee machine', search_mode: 'text', limit: 5 }));
    expect(enhanced).toMatchObject({ query: 'coffee machine', search_mode: 'text', total: 1 });
    expect(enhanced.results.map((r) => r.id)).toEqual([second.id]);

    // 12. getMemoryStats
    const stats = ok(await client.getMemoryStats());
    expect(stats).toMatchObject({ total_memories: 2, total_topics: 2, most_accessed_memory: expect.any(String) });
    expect(stats.memories_by_type).toMatchObject({ workflow: 1, knowledge: 1 });
    expect(stats.recent_memories.sort()).toEqual([created.id, second.id].sort());

    // 13-15. getSearchAnalytics, getAccessPatterns, getExtendedStats
    const searchFigures = ok(await client.getSearchAnalytics({ group_by: 'day' }));
    expect(searchFigures.total_searches).toBe(2);
    expect(searchFigures.popular_queries.map((q) => q.query).sort()).toEqual(['coffee machine', 'deploy blue/green fridays'].sort());
    const access = ok(await client.getAccessPatterns({}));
    expect(access.total_accesses).toBeGreaterThanOrEqual(2);
    expect(access.most_accessed.map((m) => m.memory_id)).toContain(created.id);
    const extended = ok(await client.getExtendedStats());
    expect(extended).toMatchObject({ total_memories: 2, activity: { created_today: 2, searched_today: 2 } });
    expect(extended.top_tags).toEqual([{ tag: 'office', count: 1 }, { tag: 'ops', count: 1 }]);

    // 16-18. getTopics (bare array), getTopicsHierarchy (nested), getTopicWithMemories
    const topics = ok(await client.getTopics());
    expect(topics.map((x) => x.name).sort()).toEqual(['Engineering', 'Releases']);
    const tree = ok(await client.getTopicsHierarchy());
    expect(tree.map((x) => x.name)).toEqual(['Engineering']);
    expect(tree[0]!.children.map((x) => x.name)).toEqual(['Releases']);
    const withMemories = ok(await client.getTopicWithMemories(child.id, { limit: 10 }));
    expect(withMemories.topic).toMatchObject({ id: child.id, name: 'Releases' });
    expect(withMemories.total_memories).toBe(1);
    expect(withMemories.memories.map((m) => m.title)).toEqual(['Release process v2']);
    const parentWith = ok(await client.getTopicWithMemories(parent.id));
    expect(parentWith.subtopics).toEqual([{ id: child.id, name: 'Releases', memory_count: 1 }]);

    // 19. updateTopic (color only: the rest stays)
    const recolored = ok(await client.updateTopic(parent.id, { color: '#00aa00' }));
    expect(recolored).toMatchObject({ id: parent.id, name: 'Engineering', color: '#00aa00', icon: 'gear' });

    // 20. deleteMemory
    ok(await client.deleteMemory(second.id));
    const gone = await client.getMemory(second.id);
    expect(gone.error).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });

    // 21. bulkDeleteMemories
    const bulk = ok(await client.bulkDeleteMemories([created.id, 'mem_00000000-0000-4000-8000-000000000000']));
    expect(bulk).toMatchObject({ deleted_count: 1, failed_ids: ['mem_00000000-0000-4000-8000-000000000000'] });
    expect(ok(await client.listMemories()).pagination.total).toBe(0);

    // 22. deleteTopic
    ok(await client.deleteTopic(child.id));
    expect((await client.getTopic(child.id)).error).toMatchObject({ statusCode: 404 });
  });

  it('reports Mnemo errors through the client\'s error shape', async () => {
    const bad = await createMemoryClient({ apiUrl: origin, [credential]: 'mnemo_live_wrong', retry: { maxRetries: 0 } }).getMemory('x');
    expect(bad.error).toMatchObject({ statusCode: 401, code: 'AUTH_ERROR' });
    const missing = await client.getMemory('mem_00000000-0000-4000-8000-000000000000');
    // G2's envelope is the spec's {error: CODE, message}: the client takes the string in `error` as its message.
    expect(missing.error).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: 'NOT_FOUND' });
  });
});
