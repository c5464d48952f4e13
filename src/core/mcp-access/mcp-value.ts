import type { ApiKeyRepository } from '../api-keys/api-key.repository.ts';
import { isoTimestamp } from '../clock.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { open, type Keyring } from '../secrets/envelope.ts';
import type { SecretService } from '../secrets/secret.service.ts';
import { secretNameOf, type McpUri } from './mcp-uri.ts';
import { mcpResourceValueContext, type McpOwner, type StoredMcpResource } from './mcp.types.ts';

/** What a read returns: the value (text), and what describes it (never a key or a sealed part). */
export interface McpValue {
  value: string;
  metadata: Record<string, unknown>;
}

const nothingAt = (uri: string, what: string) => new DomainError('NOT_FOUND', `Nothing is stored at ${uri} (${what})`);

/**
 * The value behind a URI (not a wildcard), which `registration` governs: a secret's newest version (an expired or
 * missing secret is 404), an API key's record as JSON text (the key itself is never stored, so never shown), or the
 * value stored with a custom resource. The owner is the caller's: a URI never reaches another tenant's data.
 */
export function createMcpValueReader(deps: {
  secrets: Pick<SecretService, 'get'>;
  apiKeys: Pick<ApiKeyRepository, 'find'>;
  keyring: () => Keyring;
}) {
  return async function valueAt(owner: McpOwner, readerId: string, uri: McpUri, text: string, registration: StoredMcpResource): Promise<McpValue> {
    const described = { type: registration.type, registeredUri: registration.uri };
    switch (uri.kind) {
      case 'secret': {
        const name = secretNameOf(uri.environment, uri.name);
        try {
          // A read through MCP is a secret.accessed like any other read of a value (G11 webhooks).
          const s = await deps.secrets.get(owner, { userId: readerId, via: 'mcp' }, name);
          return {
            value: s.value,
            metadata: {
              ...described, environment: uri.environment, secretName: s.name, version: s.version, tags: s.tags,
              updatedAt: isoTimestamp(s.updatedAt), expiresAt: s.expiresAt ? isoTimestamp(s.expiresAt) : null,
            },
          };
        } catch (err) {
          if (isDomainError(err) && err.code === 'NOT_FOUND') throw nothingAt(text, `no secret named ${JSON.stringify(name)}`);
          throw err;
        }
      }
      case 'api-key': {
        const k = await deps.apiKeys.find(owner, uri.id);
        if (!k) throw nothingAt(text, `no API key ${JSON.stringify(uri.id)}`);
        const record = {
          id: k.id, name: k.name, prefix: k.displayPrefix, userId: k.userId, scopes: k.scopes, tier: k.tier, mode: k.mode,
          createdAt: isoTimestamp(k.createdAt), expiresAt: k.expiresAt ? isoTimestamp(k.expiresAt) : null,
          revokedAt: k.revokedAt ? isoTimestamp(k.revokedAt) : null, replacedBy: k.replacedBy,
        };
        return { value: JSON.stringify(record), metadata: { ...described, keyId: k.id, prefix: k.displayPrefix } };
      }
      case 'custom': {
        if (registration.sealedValue === null) throw nothingAt(text, 'no value was stored with it');
        const value = open(deps.keyring(), mcpResourceValueContext(owner, registration.id), registration.sealedValue);
        return { value, metadata: { ...described, customType: uri.customType, customId: uri.id } };
      }
      default:
        throw new Error(`${text} names several values`);
    }
  };
}
