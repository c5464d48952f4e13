import { describe, expect, it } from 'vitest';
import { ImportTopicCheck, type KnownTopic } from '../../src/core/memories/import-topic-check.ts';
import { ExportLineError } from '../../src/core/memories/memory-export.ts';
import type { Scope } from '../../src/core/scope.ts';

/** mnemo import's topic check within the file itself (the store's side is tested through the CLI on both stores). */
const acme: Scope = { tenantId: 'acme', mode: 'live', workspace: 'default' };
const globex: Scope = { tenantId: 'globex', mode: 'live', workspace: 'default' };
const acmeTest: Scope = { ...acme, mode: 'test' };
const topic = (id: string, scope: Scope, name = id, parentId: string | null = null): KnownTopic => ({ id, scope, name, parentId });

describe('ImportTopicCheck', () => {
  it('refuses a topic id that an earlier line gave to another scope (tenant or mode), and a memory tied to it from elsewhere', () => {
    const check = new ImportTopicCheck([]);
    check.topic(topic('t1', acme));
    expect(() => check.topic(topic('t1', globex, 'other'))).toThrow(ExportLineError);
    expect(() => check.topic(topic('t1', acmeTest, 'other'))).toThrow('topic id t1 is already used by a topic of another tenant, mode or workspace');
    // The same line again in its own scope: the write pass skips the second.
    expect(() => check.topic(topic('t1', acme))).not.toThrow();
    expect(() => check.memory({ scope: acme, topicId: 't1' })).not.toThrow();
    expect(() => check.memory({ scope: acmeTest, topicId: 't1' })).toThrow('topic_id t1 names a topic of another tenant, mode or workspace');
    // A topic known nowhere is left as it is, and so is no topic.
    expect(() => check.memory({ scope: globex, topicId: 'gone' })).not.toThrow();
    expect(() => check.memory({ scope: globex, topicId: null })).not.toThrow();
  });

  it('refuses a name its parent already holds under another id, in that scope only', () => {
    const check = new ImportTopicCheck([topic('p', acme, 'Parent'), topic('c1', acme, 'Child', 'p')]);
    expect(() => check.topic(topic('c2', acme, 'Child', 'p'))).toThrow('a topic named "Child" under the same parent already exists in its workspace (id c1)');
    expect(() => check.topic(topic('c3', acme, 'Child', null))).not.toThrow();
    expect(() => check.topic(topic('c4', globex, 'Child', 'p'))).not.toThrow();
    // Accepted lines hold their names for the lines after them.
    expect(() => check.topic(topic('c5', acme, 'Child', null))).toThrow('(id c3)');
  });
});
