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

  /** Whether a topic with this id is stored or accepted from the file (in any scope). */
  has(id: string): boolean {
    return this.scopeOfId.has(id);
  }

  private remember(t: KnownTopic): void {
    this.scopeOfId.set(t.id, scopeKey(t.scope));
    this.idOfName.set(nameKey(t), t.id);
  }
}

/**
 * With --skip-bad, the lines that depend on a topic line left out: a memory in that topic, a sub-topic under it, and
 * in turn what depends on those. Imported as they are, they would name a topic the import never wrote (a memory
 * shown in a topic nobody can open), so they are left out too, each reported with the line it depended on.
 */
export class ImportLeftOutTopics {
  /** Topic id → the line left out that held it. */
  private readonly leftOut = new Map<string, number>();
  /** Accepted lines naming a topic: memories (topic_id) and sub-topics (parent_id, own id). */
  private readonly dependents: { n: number; topicId: string; ownId: string | null }[] = [];

  /** A bad line was left out: remembers the topic id it held, if it is a topic line with a readable id. */
  leftOutLine(line: string, n: number): void {
    let o: unknown;
    try { o = JSON.parse(line); } catch { return; }
    if (typeof o !== 'object' || o === null) return;
    const { kind, id } = o as { kind?: unknown; id?: unknown };
    if (kind === 'topic' && typeof id === 'string' && !this.leftOut.has(id)) this.leftOut.set(id, n);
  }

  topic(t: Pick<KnownTopic, 'id' | 'parentId'>, n: number): void {
    if (t.parentId !== null) this.dependents.push({ n, topicId: t.parentId, ownId: t.id });
  }

  memory(m: Pick<Memory, 'topicId'>, n: number): void {
    if (m.topicId !== null) this.dependents.push({ n, topicId: m.topicId, ownId: null });
  }

  /**
   * Line number → the left-out line it depends on and what it is, for every accepted line to leave out too. `held`:
   * whether the topic is there anyway (stored, or another line of the file with the same id was accepted).
   */
  cascade(held: (topicId: string) => boolean): Map<number, { cause: number; kind: 'memory' | 'topic' }> {
    const gone = new Map([...this.leftOut].filter(([id]) => !held(id)));
    const out = new Map<number, { cause: number; kind: 'memory' | 'topic' }>();
    for (let changed = gone.size > 0; changed;) {
      changed = false;
      for (const d of this.dependents) {
        const cause = gone.get(d.topicId);
        if (cause === undefined || out.has(d.n)) continue;
        out.set(d.n, { cause, kind: d.ownId === null ? 'memory' : 'topic' });
        if (d.ownId !== null && !gone.has(d.ownId)) gone.set(d.ownId, d.n);
        changed = true;
      }
    }
    return out;
  }
}
