import type { FieldProblem } from './errors.ts';

/**
 * What a caller's JSON may look like wherever Mnemo keeps it (memory and topic metadata, G10 event data) or reads
 * keys from it (filters).
 *
 * Depth: an object or array is one level more than its deepest member; `{}` and `{"a": 1}` are 1 level,
 * `{"a": {"b": [1]}}` 3. Deeper JSON is refused before anything else looks at it: JavaScript's own JSON.stringify
 * and structured clone recurse (a few thousand levels overflow the stack), and SQLite's JSON functions refuse more
 * than 1000 levels, which would make every metadata-filtered search of the workspace fail.
 */
export const MAX_JSON_DEPTH = 16;

/** Whether `value` nests deeper than `max` levels. Iterative and stops at the first level too many: any input is safe. */
export function exceedsJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const pending: [node: object, depth: number][] = [];
  if (typeof value === 'object' && value !== null) pending.push([value, 1]);
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (typeof child === 'object' && child !== null) pending.push([child as object, depth + 1]);
    }
  }
  return false;
}

/** Adds a problem on `field` when `value` nests deeper than MAX_JSON_DEPTH; true when it does. */
export function checkJsonDepth(value: unknown, problems: FieldProblem[], field: string): boolean {
  if (!exceedsJsonDepth(value)) return false;
  problems.push({ field, reason: 'too_deep', message: `must nest at most ${MAX_JSON_DEPTH} levels of objects and arrays` });
  return true;
}

/**
 * `__proto__` is never a key of stored JSON (every JSON body holding it is refused), and in a plain object it is
 * the prototype, not a property: a filter naming it, alone or as a dotted segment, is refused rather than ignored.
 */
export const FORBIDDEN_KEY = '__proto__';

export const hasForbiddenKeySegment = (dottedKey: string): boolean => dottedKey.split('.').includes(FORBIDDEN_KEY);

export const FORBIDDEN_KEY_MESSAGE = `must not be or contain ${FORBIDDEN_KEY}`;
