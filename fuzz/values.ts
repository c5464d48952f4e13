import fc from 'fast-check';
import type { JsonSchema } from './openapi.ts';

/**
 * A piece of JSON text placed as is into a body: what `JSON.stringify` cannot produce (10 000-deep nesting,
 * `1e999`, a `__proto__` key) or should not have to (a 100 KB string). `label` describes it in failure reports.
 */
export class RawJson {
  constructor(readonly text: string, readonly label: string) {}
}

/** JSON text of a value that may hold RawJson pieces. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** How big the hostile values get (the npm-test run bounds some of them, `npm run fuzz` uses full sizes). */
export interface Sizes {
  /** Long strings without spaces. */
  longString: number;
  /** Nesting depth of deep arrays and objects. */
  depth: number;
  /** Elements of wide arrays. */
  width: number;
}

export const FULL_SIZES: Sizes = { longString: 100_000, depth: 10_000, width: 10_000 };

const quote = (s: string) => JSON.stringify(s);

/** Text that an attacker or a broken client may send where a JSON value is expected. */
export function hostileJson(sizes: Sizes): fc.Arbitrary<RawJson> {
  const raw = (text: string, label = text) => new RawJson(text, label);
  const fixed = [
    // wrong types
    'null', 'true', 'false', '0', '""', '"1"', '[]', '{}', '[[]]', '[null]', '[{}]', '{"":""}',
    // huge, negative and odd numbers
    '-1', '-0', '1.5', '1e308', '-1e308', '1e999', '-1e999', '1e-400', '9007199254740993', '-9007199254740993',
    '123456789012345678901234567890', '2147483648', '-2147483649', '0.1e1', '1E2',
    // numbers in strings
    '"NaN"', '"Infinity"', '"-Infinity"', '"1e999"', '"0x10"', '" 1"', '"-0"', '"   "', '"null"', '"true"',
    // NUL, lone surrogates, odd Unicode
    '"a\\u0000b"', '"\\u0000"', '"\\ud800"', '"x\\udfffy"', '"\\udc00\\ud800"', '"\\ud83d"', '"\\u202e\\ufeff"',
    '"\\u0085\\u2028\\u2029"', '"💩"', '"%00"', '"%zz"', '"../../etc/passwd"', '"<script>alert(1)</script>"',
    // prototype keys
    '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '{"prototype":{"x":1}}',
    '{"__proto__":null}', '{"__proto__":"x","constructor":1,"prototype":[]}', '{"hasOwnProperty":1,"toString":"x"}',
  ].map((t) => raw(t));
  const sized = fc.constantFrom(
    () => raw(quote('a'.repeat(sizes.longString)), `"a"×${sizes.longString}`),
    () => raw(quote(base62(sizes.longString)), `base62×${sizes.longString}`),
    // Just under the common 10 000-character limits, so that it gets past them.
    () => raw(quote('b'.repeat(Math.min(9_000, sizes.longString))), `"b"×${Math.min(9_000, sizes.longString)}`),
    () => raw(quote('\u00e9'.repeat(sizes.longString / 2)), `"é"×${sizes.longString / 2}`),
    () => raw(quote('💩'.repeat(sizes.longString / 4)), `"💩"×${sizes.longString / 4}`),
    () => raw(`${'['.repeat(sizes.depth)}${']'.repeat(sizes.depth)}`, `[…] nested ${sizes.depth} deep`),
    () => raw(`${'{"a":'.repeat(sizes.depth)}1${'}'.repeat(sizes.depth)}`, `{"a":…} nested ${sizes.depth} deep`),
    () => raw(`${'{"__proto__":'.repeat(sizes.depth / 10)}{}${'}'.repeat(sizes.depth / 10)}`, `{"__proto__":…} nested ${sizes.depth / 10} deep`),
    () => raw(`[${Array(sizes.width).fill('"x"').join(',')}]`, `["x"]×${sizes.width}`),
    () => raw(`[${Array(sizes.width).fill('1e308').join(',')}]`, `[1e308]×${sizes.width}`),
    () => raw(`{${Array.from({ length: sizes.width / 10 }, (_, i) => `"k${i}":${i}`).join(',')}}`, `{k0..k${sizes.width / 10}}`),
  ).map((make) => make());
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fixed) }, { weight: 1, arbitrary: sized });
}

/** Deterministic letters and digits (no spaces), so a failure report can describe the string by its length. */
function base62(n: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[x % 62];
  }
  return out;
}

/** Plain words: valid-looking text that never reads like a stack frame or SQL (those are what the oracle looks for). */
const word = fc.constantFrom('deploy', 'rollback', 'notes', 'meeting', 'alpha', 'ops', 'release', 'memory', 'search', 'kafka', 'zeta');
const text = (min: number, max: number) =>
  fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' ')).map((s) => s.slice(0, max).padEnd(min, 'x'));

/** Examples of formats the documents name in descriptions rather than in `format`. */
const STRING_HINTS: [RegExp, unknown[]][] = [
  [/^(url)$/, ['https://example.com/hook', 'http://hooks.example.org/x']],
  [/^(created_after|timestamp|\$gte)$/, ['2026-01-01', '2025-03-01T12:00:00Z']],
  [/^(created_before|\$lte)$/, ['2099-01-01', '2099-03-01T12:00:00+02:00']],
  // `type` is an alias of `memory_type`: the same value in both, as a valid request must have.
  [/^(type|memory_type)$/, ['context']],
  [/^(parent_id|topic_id)$/, [null]],
  [/^(metadata_filter)$/, ['{"env":"prod"}', '{"source.kind":"web","n":[1,2]}']],
  [/^(model)$/, ['mnemo-embed-1024', 'mnemo-embed-1536', 'mnemo-embed-768']],
  [/^(namespace)$/, ['default', 'fuzz-ws']],
];

/**
 * A valid-looking value for a schema: what a well-behaved client would send. Bounds are kept small so that the
 * hostile part of a case, not the valid part, decides its cost.
 */
export function validValue(schema: JsonSchema, name = '', depth = 0, described = schema.description): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  // Some documents list the allowed names in words ("one of: transfer.initiated, …"): use them.
  const named = [...new Set((described ?? '').match(/\b[a-z]+(?:\.[a-z_]+)+\b/g) ?? [])].filter((n) => n.length >= 6);
  if (schema.type === 'string' && named.length > 1) return fc.constantFrom(...named);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((s) => validValue(s, name, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      const hint = STRING_HINTS.find(([re]) => re.test(name));
      if (hint) return fc.constantFrom(...hint[1]);
      if (schema.pattern) return fc.constantFrom('fuzz-id-1', 'Fuzz.id:2', 'a');
      return text(schema.minLength ?? 1, Math.min(schema.maxLength ?? 60, 60));
    }
    case 'integer': return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 100, (schema.minimum ?? 0) + 100) });
    case 'number': return fc.double({ min: schema.minimum ?? 0, max: schema.maximum ?? 1, noNaN: true, noDefaultInfinity: true });
    case 'boolean': return fc.boolean();
    case 'array': {
      if (name === 'vector' || name === 'embedding') return fc.constant(Array.from({ length: schema.minItems ?? 1536 }, (_, i) => (i % 7) / 10));
      const min = schema.minItems ?? 0;
      return fc.array(validValue(schema.items ?? { type: 'string' }, name, depth + 1, schema.items?.description ?? schema.description), { minLength: min, maxLength: Math.min(schema.maxItems ?? 3, min + 3) });
    }
    case 'object': return objectValue(schema, depth);
    case 'null': return fc.constant(null);
    default: return depth > 2 ? fc.constant('x') : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectValue(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(props)) model[k] = depth > 3 ? fc.constant('x') : validValue(s, k, depth + 1);
  const known = fc.record(model, { requiredKeys: [...required].filter((k) => k in props) });
  if (schema.additionalProperties === false || Object.keys(props).length > 0) return known;
  // A free-form object (metadata, event data): a few plain keys.
  return fc.dictionary(fc.constantFrom('env', 'source', 'team', 'n', 'nested'), fc.oneof(word, fc.integer({ min: 0, max: 9 })), { maxKeys: 3 });
}
