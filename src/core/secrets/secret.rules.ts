import type { FieldProblem } from '../errors.ts';

/**
 * What a secret may look like. Names travel in URL paths (`/secrets/:name`), so they hold no `/` and need no
 * escaping; values are text of bounded size; an expiry is a duration such as `30d`, `12h` or `90m`.
 */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const SECRET_NAME_RULE = 'must be 1-128 characters: letters, digits, _ . - (starting with a letter or digit)';
/** 64 KiB of UTF-8: room for certificates and key files, far below the body limit. */
export const SECRET_VALUE_MAX_BYTES = 64 * 1024;
export const SECRET_TAGS_MAX = 20;
export const SECRET_TAG_MAX_CHARS = 64;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;
/** Ten years: longer is a typo, not a plan. */
const MAX_EXPIRY_MS = 3653 * UNIT_MS.d;
export const EXPIRES_IN_RULE = 'must be a whole number followed by s, m, h, d or w (e.g. 90m, 12h, 30d), at most 10 years';

/** `expiresIn` in milliseconds, or a problem. */
export function parseExpiresIn(value: string, field = 'expiresIn'): { ms: number } | { problem: FieldProblem } {
  const m = /^([1-9][0-9]{0,6})([smhdw])$/.exec(value.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : NaN;
  if (!m || !(ms <= MAX_EXPIRY_MS)) return { problem: { field, reason: 'invalid_format', message: EXPIRES_IN_RULE } };
  return { ms };
}

export function secretNameProblem(name: string, field = 'name'): FieldProblem | undefined {
  return SECRET_NAME_PATTERN.test(name) ? undefined : { field, reason: 'invalid_format', message: SECRET_NAME_RULE };
}

export function secretValueProblem(value: string, field = 'value'): FieldProblem | undefined {
  if (value.length === 0) return { field, reason: 'empty', message: 'must not be empty' };
  if (Buffer.byteLength(value, 'utf8') > SECRET_VALUE_MAX_BYTES) {
    return { field, reason: 'too_long', message: `must be at most ${SECRET_VALUE_MAX_BYTES} bytes of UTF-8` };
  }
  return undefined;
}

export function secretTagsProblems(tags: readonly string[], field = 'tags'): FieldProblem[] {
  if (tags.length > SECRET_TAGS_MAX) return [{ field, reason: 'too_many', message: `at most ${SECRET_TAGS_MAX} tags` }];
  return tags.flatMap((t, i) => (t.trim().length === 0 || t.length > SECRET_TAG_MAX_CHARS
    ? [{ field: `${field}[${i}]`, reason: t.trim().length === 0 ? 'empty' as const : 'too_long' as const, message: `must be 1-${SECRET_TAG_MAX_CHARS} characters` }]
    : []));
}
