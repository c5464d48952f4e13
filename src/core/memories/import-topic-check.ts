import { ExportLineError } from './memory-export.ts';
import type { Memory } from './memory.types.ts';
import type { Scope } from '../scope.ts';
import type { Topic } from '../topics/topic.types.ts';

/**
 * `mnemo import`'s check of topics before anything is written (pass 1), against the store's topics and the file's
 * earlier lines. A topic's id is unique in the whole store, while the write pass looks a topic up in its own scope:
 * a topic line whose id another scope already holds (or whose name its parent already has under another id) would
 * fail at its insert, half-way through the write pass, and again at every rerun. Such a line is refused here, with
 * its number, like any malformed line. A memory line naming a topic that exists only in another scope is refused
 * too: importing it would tie a memory to another tenant's, mode's or workspace's topic. A topic id found nowhere is
 * left as it is (the source store had it dangling; it points at nothing).
 */

/** What the check needs of a stored topic. */
export type KnownTopic = Pick<Topic, 'id' | 'scope' | 'parentId' | 'name'>;

const scopeKey = (s: Scope): string => JSON.stringify([s.tenantId, s.mode, s.workspace]);
const nameKey = (t: KnownTopic): string => JSON.stringify([t.scope.tenantId, t.scope.mode, t.scope.workspace, t.parentId ?? '', t.name]);

export class ImportTopicCheck {
  /** Topic id → the scope holding it (the store's topics, then the file's accepted lines). */
  private readonly scopeOfId = new Map<string, string>();
  /** (scope, parent, name) → the topic id holding that name. */
  private readonly idOfName = new Map<string, string>();

  constructor(stored: Iterable<KnownTopic>) {
    for (const t of stored) this.remember(t);
  }

  /** A topic line: throws ExportLineError when the write pass could not store it; otherwise remembers it. */
  topic(t: KnownTopic): void {
    const held = this.scopeOfId.get(t.id);
    if (held !== undefined && held !== scopeKey(t.scope)) {
      throw new ExportLineError(`topic id ${t.id} is already used by a topic of another tenant, mode or workspace`);
    }
    // Same id in the same scope: already stored (the write pass skips it) or repeated in the file.
    if (held !== undefined) return;
    const holder = this.idOfName.get(nameKey(t));
    if (holder !== undefined && holder !== t.id) {
      throw new ExportLineError(`a topic named ${JSON.stringify(t.name)} under the same parent already exists in its workspace (id ${holder})`);
    }
    this.remember(t);
  }

  /** A memory line: throws ExportLineError when its topic_id names a topic of another scope only. */
  memory(m: Pick<Memory, 'scope' | 'topicId'>): void {
    if (m.topicId === null) return;
    const held = this.scopeOfId.get(m.topicId);
    if (held !== undefined && held !== scopeKey(m.scope)) {
      throw new ExportLineError(`topic_id ${m.topicId} names a topic of another tenant, mode or workspace`);
    }
  }

  private remember(t: KnownTopic): void {
    this.scopeOfId.set(t.id, scopeKey(t.scope));
    this.idOfName.set(nameKey(t), t.id);
  }
}
