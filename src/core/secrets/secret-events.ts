import { isoTimestamp } from '../clock.ts';
import type { NewEvent } from '../events/event.types.ts';
import { newEventId } from '../events/memory-events.ts';
import type { SecretOwner, StoredSecret } from './secret.types.ts';

/**
 * Payloads of the secret events G11 webhooks receive (docs/events.md). They name a secret (id, name, version, tags)
 * and who acted, and never hold its value: a receiver learns that something happened, and reads the secret through
 * the API (recorded) if it needs the value. Field names are G11's (camelCase). The events belong to the secret's
 * tenant and mode, without a workspace (as G10 events).
 */

/** Through what a value was read; the G11 API, an MCP resource, or the operator's `mnemo secrets get`. */
export type SecretAccessChannel = 'api' | 'mcp' | 'cli' | 'dashboard';

/** Who reads a secret's value, for `secret.accessed`. */
export interface SecretReader {
  /** The reading key's user id (the CLI's `--user`). */
  userId: string;
  via: SecretAccessChannel;
}

/** The secret as an event names it: never its value. */
export interface SecretRef {
  id: string;
  name: string;
  version: number;
  tags: readonly string[];
}

const scopeOf = (owner: SecretOwner) => ({ tenantId: owner.tenantId, mode: owner.mode, workspace: null });

const secretFields = (s: SecretRef) => ({ id: s.id, name: s.name, version: s.version, tags: [...s.tags] });

/** `secret.created`: a new secret (version 1), written with it. */
export function secretCreated(s: StoredSecret): NewEvent {
  return {
    id: newEventId(), type: 'secret.created', scope: scopeOf(s.owner), createdAt: s.createdAt,
    data: {
      ...secretFields(s), expiresAt: s.expiresAt === null ? null : isoTimestamp(s.expiresAt),
      createdAt: isoTimestamp(s.createdAt), createdBy: s.createdBy,
    },
  };
}

/** `secret.accessed`: a version's value was read, at `at`, by `reader`. */
export function secretAccessed(owner: SecretOwner, s: SecretRef, reader: SecretReader, at: Date): NewEvent {
  return {
    id: newEventId(), type: 'secret.accessed', scope: scopeOf(owner), createdAt: at,
    data: { ...secretFields(s), accessedBy: reader.userId, accessedVia: reader.via, accessedAt: isoTimestamp(at) },
  };
}
