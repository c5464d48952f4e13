import type { FieldProblem } from '../errors.ts';
import { REGION_PATTERN, REGION_RULE } from '../region.ts';
import { parseTimestamp } from '../search/filters.ts';
import type { AuditFilter, AuditMetadata } from './audit.types.ts';

/**
 * The actions the audit log records. Each audited operation of core/operations/catalog.ts names its action from
 * this list; a new audited operation adds its action here.
 */
export const AUDIT_ACTIONS = [
  'secret.create', 'secret.read', 'secret.update', 'secret.delete', 'secret.list',
  'audit.read', 'audit.export',
  'apikey.create', 'apikey.list', 'apikey.read', 'apikey.update', 'apikey.revoke', 'apikey.rotate',
  'webhook.create', 'webhook.list', 'webhook.read', 'webhook.update', 'webhook.delete',
  'mcp.register', 'mcp.update', 'mcp.delete', 'mcp.list', 'mcp.read', 'mcp.request', 'mcp.respond', 'mcp.approval_list', 'mcp.approval_read',
  'ingestion.review',
  'oauth.grant', 'oauth.revoke', 'oauth.refresh_reuse', 'oauth.code_reuse',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** An action filter: one action (`secret.read`) or a family (`secret.*`). */
export const AUDIT_ACTION_FILTER_PATTERN = /^[a-z][a-z_]{0,31}(\.([a-z][a-z_]{0,31}|\*))?$/;
export const AUDIT_ACTION_FILTER_RULE = 'must be an action such as secret.read, or a family such as secret.*';

/** Bounds of what a row holds (characters); longer text is cut. */
export const AUDIT_TEXT_MAX = { actor: 128, action: 64, resource: 300, ip: 64, userAgent: 256, region: 32, requestId: 128 } as const;
export const AUDIT_METADATA_MAX_KEYS = 16;
const METADATA_KEY = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
const METADATA_STRING_MAX = 128;

/**
 * Text as a row keeps it: at most `max` characters, well-formed Unicode (a lone surrogate becomes U+FFFD, as UTF-8
 * and PostgreSQL would make it), no NUL (PostgreSQL text cannot hold it). The hash is computed over this text, so
 * every store returns exactly what was hashed.
 */
export function cleanAuditText(value: string, max: number): string {
  const cut = value.length > max ? value.slice(0, max) : value;
  return cut.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD').replaceAll('\u0000', '\uFFFD');
}

export const cleanOptionalAuditText = (value: string | null | undefined, max: number): string | null =>
  (value === null || value === undefined || value.length === 0 ? null : cleanAuditText(value, max));

/**
 * Metadata as a row keeps it: keys that are not identifiers, values that are not short scalars (numbers must be safe
 * integers: their JSON is the same in every language) and keys past the limit are left out. Callers pass only what
 * may be shown; this keeps the row small and its hash reproducible, it does not decide what is safe to record.
 */
export function cleanAuditMetadata(metadata: Record<string, unknown>): AuditMetadata {
  const out: AuditMetadata = {};
  for (const key of Object.keys(metadata).sort()) {
    if (Object.keys(out).length >= AUDIT_METADATA_MAX_KEYS || !METADATA_KEY.test(key)) continue;
    const v = metadata[key];
    if (typeof v === 'string') out[key] = cleanAuditText(v, METADATA_STRING_MAX);
    else if (typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isSafeInteger(v))) out[key] = v;
  }
  return out;
}

/** The filter a request names, checked; problems are added for bad parts (field names as the surface gives them). */
export function parseAuditFilter(
  raw: {
    actor?: string | undefined; action?: string | undefined; resource?: string | undefined; from?: string | undefined; to?: string | undefined;
    region?: string | undefined;
  },
  problems: FieldProblem[],
): AuditFilter {
  const filter: AuditFilter = {};
  if (raw.actor !== undefined) {
    if (raw.actor.length === 0 || raw.actor.length > AUDIT_TEXT_MAX.actor) {
      problems.push({ field: 'actor', reason: raw.actor.length === 0 ? 'empty' : 'too_long', message: `must be 1-${AUDIT_TEXT_MAX.actor} characters` });
    } else filter.actor = raw.actor;
  }
  if (raw.action !== undefined) {
    if (!AUDIT_ACTION_FILTER_PATTERN.test(raw.action)) problems.push({ field: 'action', reason: 'invalid_format', message: AUDIT_ACTION_FILTER_RULE });
    else filter.action = raw.action.endsWith('.*') ? { prefix: raw.action.slice(0, -1) } : { exact: raw.action };
  }
  if (raw.resource !== undefined) {
    if (raw.resource.length === 0 || raw.resource.length > AUDIT_TEXT_MAX.resource) {
      problems.push({ field: 'resource', reason: raw.resource.length === 0 ? 'empty' : 'too_long', message: `must be 1-${AUDIT_TEXT_MAX.resource} characters` });
    } else filter.resource = raw.resource;
  }
  if (raw.region !== undefined) {
    if (!REGION_PATTERN.test(raw.region)) problems.push({ field: 'region', reason: 'invalid_format', message: REGION_RULE });
    else filter.region = raw.region;
  }
  for (const field of ['from', 'to'] as const) {
    const text = raw[field];
    if (text === undefined) continue;
    const at = parseTimestamp(text);
    if (at === null) problems.push({ field, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
    else filter[field] = at;
  }
  if (filter.from && filter.to && filter.from.getTime() > filter.to.getTime()) {
    problems.push({ field: 'from', reason: 'invalid_value', message: 'must not be after to' });
  }
  return filter;
}
