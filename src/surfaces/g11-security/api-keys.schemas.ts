import { Type } from 'typebox';
import { KEY_NAME_MAX, KEY_NAME_RULE, MAX_ROTATION_GRACE_SECONDS } from '../../core/api-keys/api-key.rules.ts';
import { ALL_PERMISSIONS, KEY_MODES, TIERS } from '../../core/api-keys/api-key.types.ts';
import { Pagination } from './schemas.ts';

/** G11 API-key wire schemas (`/v1/security/api-keys`): shapes and bounds here; the rules in core/api-keys/api-key.rules.ts. */

const Name = Type.String({ minLength: 1, maxLength: KEY_NAME_MAX, description: `A label for people: ${KEY_NAME_RULE}` });
const scopes = (description: string) => Type.Array(Type.Enum([...ALL_PERMISSIONS]), {
  minItems: 1, maxItems: ALL_PERMISSIONS.length * 2, description: `${description}; only scopes the calling key holds itself`,
});
const Tier = Type.Enum([...TIERS], { description: 'Rate-limit tier, at most the calling key\'s' });
const Time = Type.String({ format: 'date-time' });

export const CreateApiKeyBody = Type.Object({
  name: Name,
  scopes: Type.Optional(scopes('Default: the calling key\'s scopes')),
  tier: Type.Optional(Tier),
  expiresAt: Type.Optional(Type.Union([Time, Type.Null()], {
    description: 'A future instant; null: never (only if the calling key never expires); default: the calling key\'s expiry',
  })),
}, { additionalProperties: false, description: 'The new key belongs to the calling key\'s tenant, mode and user' });

export const UpdateApiKeyBody = Type.Object({
  name: Type.Optional(Name),
  scopes: Type.Optional(scopes('Replaces the key\'s scopes')),
}, { additionalProperties: false, description: 'Absent fields stay; new scopes apply from the key\'s next request' });

export const RotateApiKeyBody = Type.Object({
  gracePeriodSeconds: Type.Optional(Type.Integer({
    minimum: 0, maximum: MAX_ROTATION_GRACE_SECONDS, description: 'How long the old key keeps working (default 86400; 0: it stops at once)',
  })),
}, { additionalProperties: false });

export const ApiKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'key_…' }) });

export const ListApiKeysQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'pagination.cursor of the previous page' })),
});

const ApiKeyWire = Type.Object({
  id: Type.String({ description: 'key_…' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, safe to show (mnemo_live_AbC1)' }),
  scopes: Type.Array(Type.String()),
  tier: Type.Enum([...TIERS]),
  mode: Type.Enum([...KEY_MODES]),
  createdAt: Time,
  expiresAt: Type.Union([Time, Type.Null()], { description: 'When it stops working; a rotated key\'s is the end of its grace period' }),
  revokedAt: Type.Union([Time, Type.Null()]),
  replacedBy: Type.Union([Type.String(), Type.Null()], { description: 'The key that replaced it by rotation' }),
});
const IssuedApiKeyWire = Type.Object({
  ...ApiKeyWire.properties,
  key: Type.String({ description: 'The key itself: shown in this answer only, never stored' }),
});

export const ApiKeyResponses = {
  key: ApiKeyWire,
  issued: IssuedApiKeyWire,
  list: Type.Object({ data: Type.Array(ApiKeyWire), pagination: Pagination }),
  revoked: Type.Null({ description: 'Revoked' }),
};
