import type { Clock } from '../clock.ts';
import { DomainError, isDomainError, validationError, type FieldProblem } from '../errors.ts';
import type { EventRepository } from '../events/event.repository.ts';
import { prefixedId } from '../ids.ts';
import { REGION_PATTERN, REGION_RULE } from '../region.ts';
import { open, seal, type Keyring } from './envelope.ts';
import { secretAccessed, secretCreated, type SecretReader, type SecretRef } from './secret-events.ts';
import { SECRET_VERSIONS_KEPT, type SecretRepository } from './secret.repository.ts';
import { secretNameProblem, secretTagsProblems, secretValueProblem } from './secret.rules.ts';
import { secretVersionContext, type SecretOwner, type StoredSecret } from './secret.types.ts';

/** A secret as the caller reads it: the value of one version. */
export interface SecretView {
  id: string;
  name: string;
  value: string;
  version: number;
  tags: string[];
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
}

/** A secret in a list: no value. */
export type SecretSummary = Omit<SecretView, 'value'>;

/** Who writes: the key's user, and the region the request named (`X-Region`). */
export interface SecretActor {
  userId: string;
  region: string | null;
}

export interface CreateSecretInput {
  name: string;
  value: string;
  tags: string[];
  /** null: never expires. */
  expiresInMs: number | null;
}

export interface UpdateSecretInput {
  value: string;
  /** Absent: the tags stay. */
  tags?: string[];
  /** Absent: the expiry stays; null: no expiry from now on; a number: expires that long after this write. */
  expiresInMs?: number | null;
}

export type SecretService = ReturnType<typeof createSecretService>;

/** How often a write that lost a race for the next version number is tried again. */
const VERSION_RACE_RETRIES = 3;

/** Cursors are opaque to clients: the last name of a page, in base64url. */
const encodeCursor = (name: string): string => Buffer.from(`n:${name}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('n:') || secretNameProblem(text.slice(2)) !== undefined) {
    throw validationError([{ field: 'cursor', reason: 'invalid_value', message: 'is not a cursor of this list' }]);
  }
  return text.slice(2);
}

const notFound = (name: string) => new DomainError('NOT_FOUND', `Secret ${JSON.stringify(name)} not found`);
const tagsOf = (tags: readonly string[]): string[] => [...new Set(tags.map((t) => t.trim()))];

export interface SecretServiceDeps {
  secrets: SecretRepository;
  /** Where `secret.accessed` goes (`secret.created` is written with the secret, by the repository). */
  events: Pick<EventRepository, 'append'>;
  keyring: () => Keyring;
  clock: Clock;
}

/**
 * Named, versioned secrets of one owner (tenant + key mode), sealed before they reach storage. An expired secret
 * is never returned: it reads as not found, and a new secret may take its name. Creating one emits
 * `secret.created` (in the creating transaction), reading a value `secret.accessed` (secret-events.ts).
 */
export function createSecretService(deps: SecretServiceDeps) {
  const { secrets, clock } = deps;
  const isExpired = (s: StoredSecret) => s.expiresAt !== null && s.expiresAt.getTime() <= clock.now().getTime();
  const summary = (s: StoredSecret): SecretSummary => ({
    id: s.id, name: s.name, version: s.version, tags: s.tags, createdAt: s.createdAt, updatedAt: s.updatedAt, expiresAt: s.expiresAt,
  });

  function check(problems: (FieldProblem | undefined)[]): void {
    const found = problems.filter((p): p is FieldProblem => p !== undefined);
    if (found.length > 0) throw validationError(found);
  }

  async function create(owner: SecretOwner, actor: SecretActor, input: CreateSecretInput): Promise<SecretView> {
    check([secretNameProblem(input.name), secretValueProblem(input.value), ...secretTagsProblems(input.tags)]);
    const now = clock.now();
    const secret: StoredSecret = {
      id: prefixedId('sec', 24), owner, name: input.name, tags: tagsOf(input.tags), version: 1, createdAt: now, updatedAt: now,
      expiresAt: input.expiresInMs === null ? null : new Date(now.getTime() + input.expiresInMs),
      region: actor.region, createdBy: actor.userId, updatedBy: actor.userId,
    };
    const first = { version: 1, sealed: seal(deps.keyring(), secretVersionContext(owner, input.name, 1), input.value), createdAt: now, createdBy: actor.userId };
    const events = [secretCreated(secret)];
    try {
      await secrets.create(secret, first, events);
    } catch (err) {
      if (!isDomainError(err) || err.code !== 'CONFLICT') throw err;
      // An expired secret no longer holds its name: it is removed, and the new one takes its place.
      const existing = await secrets.find(owner, input.name);
      if (!existing || !isExpired(existing.secret)) {
        throw new DomainError('CONFLICT', `A secret named ${JSON.stringify(input.name)} already exists`, { field: 'name' });
      }
      await secrets.delete(owner, input.name);
      await secrets.create(secret, first, events);
    }
    return { ...summary(secret), value: input.value };
  }

  /**
   * Records that `reader` read the value of `secret` (one version): appends `secret.accessed`, which G11 webhooks
   * subscribed to it receive. `get` calls it for every value it returns; code that hands out a secret's value by
   * another path (an MCP resource) calls it too. Awaited before the value is handed out: when the event cannot be
   * written the read fails, so no value leaves unannounced.
   */
  async function recordAccess(owner: SecretOwner, secret: SecretRef, reader: SecretReader): Promise<void> {
    await deps.events.append([secretAccessed(owner, secret, reader, clock.now())]);
  }

  /** A secret's value (the newest version, or `version` of the kept ones), read by `reader`: emits `secret.accessed`. */
  async function get(owner: SecretOwner, reader: SecretReader, name: string, version?: number): Promise<SecretView> {
    const found = await secrets.find(owner, name, version);
    if (!found || isExpired(found.secret)) {
      if (found === null && version !== undefined && (await secrets.find(owner, name)) !== null) {
        throw new DomainError('NOT_FOUND', `Version ${version} of secret ${JSON.stringify(name)} is not kept`);
      }
      throw notFound(name);
    }
    const value = open(deps.keyring(), secretVersionContext(owner, name, found.version.version), found.version.sealed);
    const view = { ...summary(found.secret), version: found.version.version, value };
    await recordAccess(owner, view, reader);
    return view;
  }

  /**
   * A secret's metadata (version, tags, dates) without its value: nothing is unsealed, so no `secret.accessed`. An
   * expired or missing secret is NOT_FOUND, as for `get`.
   */
  async function describe(owner: SecretOwner, name: string): Promise<SecretSummary> {
    const found = await secrets.find(owner, name);
    if (!found || isExpired(found.secret)) throw notFound(name);
    return summary(found.secret);
  }

  async function update(owner: SecretOwner, actor: SecretActor, name: string, input: UpdateSecretInput): Promise<SecretView> {
    check([secretValueProblem(input.value), ...secretTagsProblems(input.tags ?? [])]);
    for (let attempt = 0; ; attempt++) {
      const current = await secrets.find(owner, name);
      if (!current || isExpired(current.secret)) throw notFound(name);
      const now = clock.now();
      const version = current.secret.version + 1;
      const next = { version, sealed: seal(deps.keyring(), secretVersionContext(owner, name, version), input.value), createdAt: now, createdBy: actor.userId };
      const changes = {
        tags: input.tags === undefined ? current.secret.tags : tagsOf(input.tags),
        expiresAt: input.expiresInMs === undefined ? current.secret.expiresAt
          : input.expiresInMs === null ? null : new Date(now.getTime() + input.expiresInMs),
        region: actor.region ?? current.secret.region, updatedAt: now, updatedBy: actor.userId,
      };
      try {
        const stored = await secrets.addVersion(owner, name, current.secret.version, next, changes, SECRET_VERSIONS_KEPT);
        if (!stored) throw notFound(name);
        return { ...summary(stored), value: input.value };
      } catch (err) {
        // Another write took this version number first: build on the newer version.
        if (!isDomainError(err) || err.code !== 'CONFLICT' || attempt >= VERSION_RACE_RETRIES) throw err;
      }
    }
  }

  async function remove(owner: SecretOwner, name: string): Promise<void> {
    const current = await secrets.find(owner, name);
    if (!current || isExpired(current.secret)) throw notFound(name);
    await secrets.delete(owner, name);
  }

  /** Names ascending; `cursor` continues after the previous page (null: from the first); `region`: of that region only. */
  async function list(owner: SecretOwner, q: { tags: string[]; region?: string | null; limit: number; cursor: string | null }):
    Promise<{ items: SecretSummary[]; total: number; nextCursor: string | null }> {
    const afterName = q.cursor === null ? null : decodeCursor(q.cursor);
    if (q.region && !REGION_PATTERN.test(q.region)) throw validationError([{ field: 'region', reason: 'invalid_format', message: REGION_RULE }]);
    // One more than asked tells whether another page follows.
    const { items, total } = await secrets.list(owner, {
      tagsAny: tagsOf(q.tags), ...(q.region ? { region: q.region } : {}), limit: q.limit + 1, afterName, now: clock.now(),
    });
    const page = items.slice(0, q.limit);
    const more = items.length > q.limit;
    return { items: page.map(summary), total, nextCursor: more ? encodeCursor(page.at(-1)!.name) : null };
  }

  return { create, get, describe, update, delete: remove, list, recordAccess };
}
