import { Type } from 'typebox';
import { REGION_PATTERN } from '../../core/region.ts';
import { EXPIRES_IN_RULE, SECRET_NAME_RULE, SECRET_TAGS_MAX, SECRET_VALUE_MAX_BYTES } from '../../core/secrets/secret.rules.ts';
import { G11ErrorWire } from './errors.ts';

/** G11 wire schemas (`/v1/security`): shapes and bounds here; the rules themselves in core/secrets/secret.rules.ts. */

const Name = Type.String({ minLength: 1, maxLength: 128, description: `Secret name: ${SECRET_NAME_RULE}` });
const Value = Type.String({ minLength: 1, maxLength: SECRET_VALUE_MAX_BYTES, description: `The secret, at most ${SECRET_VALUE_MAX_BYTES} bytes of UTF-8` });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: SECRET_TAGS_MAX, description: `At most ${SECRET_TAGS_MAX} tags` });
const ExpiresIn = Type.String({ maxLength: 16, description: `Time to live from this write: ${EXPIRES_IN_RULE}` });

export const CreateSecretBody = Type.Object({
  name: Name,
  value: Value,
  tags: Type.Optional(Tags),
  expiresIn: Type.Optional(ExpiresIn),
});

export const UpdateSecretBody = Type.Object({
  value: Value,
  tags: Type.Optional(Tags),
  expiresIn: Type.Optional(Type.Union([ExpiresIn, Type.Null()], { description: 'A new time to live from this write; null: never expires; absent: unchanged' })),
}, { description: 'Makes version N+1; the last 10 versions stay readable with ?version=N' });

export const NameParams = Type.Object({ name: Name });

export const GetSecretQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A kept version (default: the newest)' })),
});

/** A data-residency region (core/region.ts): what X-Region records on writes, and what `region` filters on. */
export const Region = (description: string) => Type.String({ pattern: REGION_PATTERN.source, description: `${description} (1-32 letters, digits, -)` });

export const ListSecretsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'pagination.cursor of the previous page' })),
  tags: Type.Optional(Type.String({ maxLength: 2000, description: 'Comma-separated: secrets carrying any of them' })),
  region: Type.Optional(Region('Only secrets whose last write named this X-Region')),
});

export const RegionHeaders = Type.Object({
  'x-region': Type.Optional(Region('Data-residency region recorded on writes')),
});

const Time = Type.String({ format: 'date-time' });
const SecretSummaryWire = Type.Object({
  id: Type.String({ description: 'sec_…' }),
  name: Type.String(),
  version: Type.Integer(),
  tags: Type.Array(Type.String()),
  createdAt: Time,
  updatedAt: Time,
  expiresAt: Type.Union([Time, Type.Null()]),
});
export const SecretWire = Type.Object({ ...SecretSummaryWire.properties, value: Type.String() });

export const Pagination = Type.Object({
  cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page' }),
  hasMore: Type.Boolean(),
  totalCount: Type.Integer(),
});

export const Responses = {
  secret: SecretWire,
  list: Type.Object({ data: Type.Array(SecretSummaryWire), pagination: Pagination }),
  deleted: Type.Null({ description: 'Deleted' }),
  error: G11ErrorWire,
};
