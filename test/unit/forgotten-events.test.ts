import { describe, expect, it } from 'vitest';
import {
  eventMemoryId, forgottenEventData, forgottenStoredData, memoryCreated, memoryDeleted, memorySuperseded, storedEventData,
} from '../../src/core/events/memory-events.ts';
import { makeMemory } from '../support/fixtures.ts';

const scope = { tenantId: 't', mode: 'live' as const, workspace: 'w' };

describe('what a forgotten memory\'s events keep (forgottenEventData)', () => {
  it('keeps the id, the object, the workspace, the times, the users and the change flags; never what the memory said', () => {
    const m = { ...makeMemory(scope), title: 'T secret', content: 'C secret', tags: ['secret'], metadata: { s: 'secret' }, memoryType: 'secret-type' };
    const created = memoryCreated(m);
    const kept = forgottenEventData(created.type, created.data);
    expect(kept).toEqual({ object: 'memory', id: m.id, workspace: 'w', created_at: m.createdAt.toISOString(), created_by: m.createdBy, forgotten: true });
    expect(JSON.stringify(kept)).not.toContain('secret');
    // Idempotent.
    expect(forgottenEventData(created.type, kept)).toEqual(kept);

    const superseded = memorySuperseded({ ...m, validUntil: new Date(Date.UTC(2026, 5, 1)), supersededBy: 'b' }, 'b', new Date(Date.UTC(2026, 5, 1)), 'u');
    expect(forgottenEventData(superseded.type, superseded.data)).toEqual({
      object: 'memory', id: m.id, workspace: 'w', superseded_by: 'b', valid_from: m.validFrom.toISOString(),
      valid_until: '2026-06-01T00:00:00.000Z', superseded_at: '2026-06-01T00:00:00.000Z', superseded_by_user: 'u', forgotten: true,
    });

    // memory.updated's changes: its three booleans only.
    expect(forgottenEventData('memory.updated', { id: 'x', content: 'c', changes: { content: true, tags: 'no', extra: 'secret' } }))
      .toEqual({ id: 'x', changes: { content: true, metadata: false, tags: false }, forgotten: true });
    // embedding.generated names its memory by memory_id.
    expect(forgottenEventData('embedding.generated', { object: 'embedding', memory_id: 'x', model: 'm', dimensions: 3, trigger: 'memory.created', generated_at: 'g', workspace: 'w' }))
      .toEqual({ object: 'embedding', memory_id: 'x', model: 'm', dimensions: 3, trigger: 'memory.created', generated_at: 'g', workspace: 'w', forgotten: true });
    // An unreadable payload keeps the id it is filed under.
    expect(forgottenStoredData('memory.created', null, 'x')).toEqual({ id: 'x', forgotten: true });
    expect(forgottenStoredData('embedding.generated', ['junk'], 'x')).toEqual({ memory_id: 'x', forgotten: true });
  });

  it('stores a memory.deleted as forgotten (its fan-out saw the tags and metadata), every other event as built', () => {
    const m = { ...makeMemory(scope), tags: ['ops'], metadata: { env: 'prod' } };
    const deleted = memoryDeleted(m, new Date(Date.UTC(2026, 0, 2)), 'u', 'user_request');
    expect(deleted.data).toMatchObject({ tags: ['ops'], metadata: { env: 'prod' } });
    expect(storedEventData(deleted)).toEqual({
      object: 'memory', id: m.id, workspace: 'w', deleted_at: '2026-01-02T00:00:00.000Z', deleted_by: 'u', reason: 'user_request', forgotten: true,
    });
    const created = memoryCreated(m);
    expect(storedEventData(created)).toBe(created.data);
  });

  it('files memory.* events under data.id and embedding.generated under data.memory_id; others under none', () => {
    expect(eventMemoryId('memory.created', { id: 'a' })).toBe('a');
    expect(eventMemoryId('memory.superseded', { id: 'a', superseded_by: 'b' })).toBe('a');
    expect(eventMemoryId('embedding.generated', { memory_id: 'a' })).toBe('a');
    expect(eventMemoryId('search.performed', { id: 'a' })).toBeNull();
    expect(eventMemoryId('memory.created', { id: 5 })).toBeNull();
  });
});
