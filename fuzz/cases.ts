import fc from 'fast-check';
import type { Credential, JsonSchema, Operation, Parameter } from './openapi.ts';
import { RawJson, hostileJson, toJsonText, validValue, type Sizes } from './values.ts';

/** One request, exactly as sent: the URL is raw (hostile percent-encoding stays as written). */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface FuzzCase {
  route: string;
  request: FuzzRequest;
  /** What was made hostile, in words (large values are described here, not printed). */
  notes: string[];
}

/** The keys and ids a case may use. Labels stand in for keys in reports. */
export interface CaseContext {
  /** Enterprise keys of the fuzz tenant (all scopes), used in turn so per-key limits do not answer everything. */
  keys: string[];
  freeKey: string;
  readOnlyKey: string;
  /** Valid-looking values for a path parameter (existing ids of both tenants, fresh UUIDs, prefixes). */
  pathValues(op: Operation, param: string): string[];
  sizes(op: Operation): Sizes;
}

type Part = { apply(r: FuzzRequest, notes: string[]): void };

const latin1Safe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

// ---- path and query text ---------------------------------------------------------------------------------------

export const HOSTILE_SEGMENTS = [
  '%', '%zz', '%c0%af', '%00', '%2F', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '__proto__', 'constructor', 'prototype',
  '%ED%A0%80', '%F0%9F%92%A9', '%FF%FE', "'", '%22', '%20', ';', '*', 'null', 'undefined', '-1', '1e999', 'NaN',
  '00000000-0000-0000-0000-000000000000', '%E2%80%AE', 'a%00b', 'mem_', 'whk_', '%25',
];

function hostileSegment(sizes: Sizes): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    { weight: 1, arbitrary: fc.constantFrom(257, 300, Math.min(sizes.longString, 4000)).map((n) => 'a'.repeat(n)) },
  );
}

export const BAD_QUERY_VALUES = [
  '%', '%zz', '%c0%af', '%ff', '%00', '%ED%A0%80', '%u0041', '%%', 'a%2', '', '-1', '-0', '1e999', '1e308', 'NaN',
  'Infinity', '99999999999999999999', '0x1F', '1.5', 'true', 'null', '%5B%5D', '__proto__', '%7B%7D', '%5B', ',,,',
  '%20', '+', 'a,b,,c', '%E2%80%AE',
];

const BAD_QUERY_PAIRS = [
  '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=1', 'a[b][c]=1', '&&&', '=x', 'x',
  '%zz=1', '%=%', 'limit=1&limit=2', 'q=a&q=b', '%3D%26=%3D%26', 'filters[__proto__]=x', 'filters[constructor][x]=1',
  'filters[]=1', 'events=__proto__', 'events[]=x',
];

function queryValue(p: Parameter, sizes: Sizes): fc.Arbitrary<{ text: string; note?: string }> {
  const valid = validValue(p.schema, p.name).map((v) => ({
    text: encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v) ?? ''),
  }));
  const bad = fc.constantFrom(...BAD_QUERY_VALUES).map((text) => ({ text, note: `?${p.name}=${text}` }));
  const json = hostileJson(sizes).map((r) => ({ text: encodeURIComponent(r.text), note: `?${p.name}=${r.label} (URL-encoded)` }));
  const long = fc.constantFrom('a', 'é', '%zz').map((unit) => {
    const n = Math.floor(Math.min(sizes.longString, 20_000) / unit.length);
    return { text: unit === 'é' ? encodeURIComponent(unit).repeat(n) : unit.repeat(n), note: `?${p.name}=${unit}×${n}` };
  });
  return fc.oneof({ weight: 5, arbitrary: valid }, { weight: 3, arbitrary: bad }, { weight: 2, arbitrary: json }, { weight: 1, arbitrary: long });
}

function pathPart(op: Operation, ctx: CaseContext, hostile: boolean): fc.Arbitrary<Part> {
  const sizes = ctx.sizes(op);
  const params = op.parameters.filter((p) => p.in === 'path');
  const valid = (p: Parameter) => fc.constantFrom(...ctx.pathValues(op, p.name)).map((v): { text: string; note?: string } => ({ text: encodeURIComponent(v) }));
  const bad = (p: Parameter) => hostileSegment(sizes).map((text) => ({ text, note: `{${p.name}}=${text.length > 40 ? `${text.slice(0, 3)}…×${text.length}` : text}` }));
  return fc.tuple(...params.map((p) => (hostile ? fc.oneof({ weight: 1, arbitrary: valid(p) }, { weight: 3, arbitrary: bad(p) }) : valid(p))))
    .map((segs): Part => ({
      apply(r, notes) {
        params.forEach((p, i) => {
          r.url = r.url.replace(`{${p.name}}`, segs[i]!.text);
          if (segs[i]!.note) notes.push(segs[i]!.note);
        });
      },
    }));
}

function queryPart(op: Operation, ctx: CaseContext, hostile: boolean): fc.Arbitrary<Part> {
  const sizes = ctx.sizes(op);
  const params = op.parameters.filter((p) => p.in === 'query' && !p.name.includes('<'));
  const valid = (p: Parameter) => validValue(p.schema, p.name).map((v): { text: string; note?: string } => ({
    text: encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v) ?? ''),
  }));
  const values = fc.tuple(...params.map((p) => fc.option(hostile ? fc.oneof({ weight: 1, arbitrary: valid(p) }, { weight: 2, arbitrary: queryValue(p, sizes) }) : valid(p), { freq: 2 })));
  const extra = hostile ? fc.option(fc.constantFrom(...BAD_QUERY_PAIRS), { freq: params.length > 0 ? 3 : 1 }) : fc.constant(null);
  return fc.tuple(values, extra).map(([vs, pair]): Part => ({
    apply(r, notes) {
      const pairs: string[] = [];
      params.forEach((p, i) => {
        const v = vs[i];
        if (v === null || v === undefined) return;
        pairs.push(`${encodeURIComponent(p.name)}=${v.text}`);
        if (v.note) notes.push(v.note);
      });
      if (pair !== null) {
        pairs.push(pair);
        notes.push(`query += ${pair}`);
      }
      if (pairs.length > 0) r.url = `${r.url}?${pairs.join('&')}`;
    },
  }));
}

// ---- headers ---------------------------------------------------------------------------------------------------

const HOSTILE_HEADER_VALUES = ['', ' ', '__proto__', '%zz', '\t', 'ÿþ', 'null', '-1', '1e999', 'NaN', '../x', 'a,b', '"', 'a'.repeat(4000)];

function credentialPart(op: Operation, ctx: CaseContext, hostile: boolean): fc.Arbitrary<Part> {
  const scheme: Credential = op.credential === 'none' ? 'bearer' : op.credential;
  const other: Credential = scheme === 'bearer' ? 'apiKey' : 'bearer';
  const put = (r: FuzzRequest, how: Credential, key: string) => {
    if (how === 'bearer') r.headers.authorization = `Bearer ${key}`;
    else r.headers['x-api-key'] = key;
  };
  const good = fc.nat().map((i): Part => ({ apply: (r) => put(r, scheme, ctx.keys[i % ctx.keys.length]!) }));
  if (!hostile) return good;
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Part>({ apply: (r, n) => { put(r, scheme, ctx.freeKey); n.push('free-tier key'); } }) },
    { weight: 1, arbitrary: fc.constant<Part>({ apply: (r, n) => { put(r, scheme, ctx.readOnlyKey); n.push('key with memories:read only'); } }) },
    { weight: 1, arbitrary: fc.constant<Part>({ apply: (r, n) => { put(r, other, ctx.keys[0]!); n.push(`key in the other header (${other})`); } }) },
    { weight: 1, arbitrary: fc.constant<Part>({ apply: (_r, n) => { n.push('no key'); } }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'mnemo_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000', `${ctx.keys[0]!.slice(0, -1)}x`, 'mnemo_test_', '%zz', '__proto__',
        'a'.repeat(4000), 'Bearer', 'null',
      ).map((bad): Part => ({
        apply: (r, n) => {
          if (scheme === 'bearer' && bad === 'Bearer') r.headers.authorization = 'Bearer';
          else put(r, scheme, bad);
          n.push(`bad key ${bad.length > 40 ? `a×${bad.length}` : bad}`);
        },
      })),
    },
  );
}

function headerPart(op: Operation, hostile: boolean): fc.Arbitrary<Part> {
  const params = op.parameters.filter((p) => p.in === 'header');
  const valid = (p: Parameter) => validValue(p.schema, p.name).map((v) => ({ value: latin1Safe(String(v)), hostile: false }));
  const bad = fc.constantFrom(...HOSTILE_HEADER_VALUES).map((value) => ({ value, hostile: true }));
  const named = fc.tuple(...params.map((p) => fc.option(hostile ? fc.oneof(valid(p), bad) : valid(p), { freq: 2 })));
  const goodWorkspace = fc.constantFrom('default', 'fuzz-ws');
  const workspace = fc.option(hostile ? fc.oneof(goodWorkspace, fc.constantFrom(...HOSTILE_HEADER_VALUES, 'x'.repeat(65), 'é')) : goodWorkspace, { freq: 3 });
  const requestId = hostile ? fc.option(fc.constantFrom(...HOSTILE_HEADER_VALUES, 'req_fuzz-1'), { freq: 2 }) : fc.constant(null);
  return fc.tuple(named, workspace, requestId).map(([values, ws, rid]): Part => ({
    apply(r, notes) {
      params.forEach((p, i) => {
        const v = values[i];
        if (!v) return;
        r.headers[p.name.toLowerCase()] = v.value;
        if (v.hostile) notes.push(`${p.name}: ${short(v.value)}`);
      });
      if (ws !== null) {
        r.headers['x-workspace-id'] = ws;
        if (hostile) notes.push(`X-Workspace-ID: ${short(ws)}`);
      }
      if (rid !== null) { r.headers['x-request-id'] = rid; notes.push(`X-Request-Id: ${short(rid)}`); }
    },
  }));
}

const short = (s: string) => (s.length > 40 ? `${JSON.stringify(s.slice(0, 3))}…(${s.length} chars)` : JSON.stringify(s));

// ---- bodies ----------------------------------------------------------------------------------------------------

const CONTENT_TYPES: [weight: number, value: string | null][] = [
  [20, 'application/json'], [3, 'application/json; charset=utf-8'], [1, null], [1, 'text/plain'],
  [1, 'application/x-www-form-urlencoded'], [1, 'multipart/form-data; boundary=x'], [1, 'application/json; charset=utf-16'],
  [1, 'application/jsonx'], [1, 'APPLICATION/JSON'], [1, 'application/*'], [1, ''], [1, 'application/json; charset=%zz'],
  [1, 'application/merge-patch+json'], [1, 'text/event-stream'],
];

const contentType = fc.oneof(...CONTENT_TYPES.map(([weight, v]) => ({ weight, arbitrary: fc.constant(v) })));

const MALFORMED: (string | Buffer)[] = [
  '', ' ', '{', '}', '{"a":}', "{'a':1}", '{"a":1,}', '[1,2', 'NaN', '\u0000', '\ufeff{}', '{"a":1}{"b":2}', '{"a":"\\x"}',
  '{"a":"\\ud800"', 'undefined', '{"a" 1}', '01', '{"a":01}', '{"a":"\u0000"}', '{"a":1e}', '{"a":-}', '"', '{"a":tru}',
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
];

/** Paths of every node of a generated value (objects and arrays included), for choosing where to mutate. */
function nodePaths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.slice(0, 5).forEach((v, i) => nodePaths(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) nodePaths(v, [...prefix, k], out);
  return out;
}

const pathText = (path: (string | number)[]) => `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}`;

/** Sets a property without ever touching a prototype (the key may be `__proto__`). */
function setOwn(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function replaceAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
  setOwn(node, path[path.length - 1]!, value);
  return copy;
}

const ODD_KEYS = ['__proto__', 'constructor', 'prototype', '', 'a\u0000b', '\ud800', '$where', '$or', 'a.b.c', 'x'.repeat(300), 'toString'];

function bodyPart(op: Operation, sizes: Sizes, mutate: boolean, oddType: boolean): fc.Arbitrary<Part> {
  const schema: JsonSchema = op.body ?? {};
  const hostile = hostileJson(sizes);
  const valid = validValue(schema);
  const json = (value: unknown) => toJsonText(value);

  const asIs = valid.map((v) => ({ text: json(v), notes: [] as string[] }));
  const mutated = fc.tuple(valid, fc.nat(), hostile).map(([v, i, h]) => {
    const paths = nodePaths(v);
    const path = paths[i % paths.length]!;
    return { text: json(replaceAt(v, path, h)), notes: [`${pathText(path)} := ${h.label}`] };
  });
  const oddKey = fc.tuple(valid, fc.nat(), fc.constantFrom(...ODD_KEYS), fc.oneof(hostile, fc.constant(new RawJson('{"polluted":true}', '{"polluted":true}'))))
    .map(([v, i, key, h]) => {
      const objects = nodePaths(v).filter((p) => {
        let node: unknown = v;
        for (const k of p) node = (node as Record<string | number, unknown>)[k];
        return node !== null && typeof node === 'object' && !Array.isArray(node);
      });
      const path = objects[i % Math.max(objects.length, 1)] ?? [];
      let node = structuredClone(v) as Record<string, unknown>;
      const root = node;
      for (const k of path) node = node[k] as Record<string, unknown>;
      setOwn(node, key, h);
      return { text: json(root), notes: [`${pathText([...path, key.length > 40 ? `x×${key.length}` : key])} := ${h.label}`] };
    });
  const whole = hostile.map((h) => ({ text: h.text, notes: [`body = ${h.label}`] }));
  const malformed = fc.constantFrom(...MALFORMED).map((b) => ({ text: b, notes: [`malformed body ${JSON.stringify(b.toString()).slice(0, 60)}`] }));
  const duplicate = valid.map((v) => {
    const text = json(v);
    return { text: text.startsWith('{') && text !== '{}' ? `{"__proto__":1,${text.slice(1, -1)},${text.slice(1, -1)}}` : text, notes: ['duplicated keys and a __proto__ key'] };
  });

  const content = !mutate ? (op.body ? asIs : fc.constant(null)) : op.body
    ? fc.oneof(
      { weight: 2, arbitrary: asIs }, { weight: 6, arbitrary: mutated }, { weight: 2, arbitrary: oddKey },
      { weight: 1, arbitrary: whole }, { weight: 1, arbitrary: malformed }, { weight: 1, arbitrary: duplicate },
    )
    // Operations without a body: mostly none, sometimes one anyway (a GET body is legal HTTP).
    : fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: whole }, { weight: 1, arbitrary: malformed });
  const type = oddType ? contentType : fc.constant('application/json');
  return fc.tuple(content, type).map(([c, type]): Part => ({
    apply(r, notes) {
      if (c === null) return;
      r.body = c.text;
      notes.push(...c.notes);
      if (type !== null) r.headers['content-type'] = type;
      if (type !== 'application/json') notes.push(type === null ? 'no Content-Type' : `Content-Type: ${type}`);
    },
  }));
}

type Focus = 'body' | 'path' | 'query' | 'headers' | 'credential' | 'content-type' | 'everything' | 'nothing';

/**
 * Which part of the request a case makes hostile. Mostly one part, the rest valid, so that each hostile value
 * gets past the checks of the other parts and reaches deep into the handler; sometimes everything at once.
 */
function focusOf(op: Operation): fc.Arbitrary<Focus> {
  const has = (where: Parameter['in']) => op.parameters.some((p) => p.in === where && !p.name.includes('<'));
  const weights: [Focus, number][] = [
    ['body', op.body ? 8 : 1], ['path', has('path') ? 3 : 0], ['query', has('query') ? 5 : 0], ['headers', 1],
    ['credential', 1], ['content-type', op.body ? 1 : 0], ['everything', 2], ['nothing', 1],
  ];
  return fc.oneof(...weights.filter(([, w]) => w > 0).map(([f, weight]) => ({ weight, arbitrary: fc.constant(f) })));
}

/** Requests for one operation: valid-looking ones mutated in one part (path, query, headers, key, body) or all. */
export function casesFor(op: Operation, ctx: CaseContext): fc.Arbitrary<FuzzCase> {
  return focusOf(op).chain((focus) => {
    const on = (f: Focus) => focus === f || focus === 'everything';
    return fc.tuple(
      pathPart(op, ctx, on('path')), queryPart(op, ctx, on('query')), credentialPart(op, ctx, on('credential')),
      headerPart(op, on('headers')), bodyPart(op, ctx.sizes(op), on('body'), on('content-type')),
    );
  }).map((parts) => {
    const request: FuzzRequest = { method: op.method, url: op.path, headers: {} };
    const notes: string[] = [];
    for (const p of parts) p.apply(request, notes);
    return { route: `${op.method} ${op.path}`, request, notes };
  });
}

/** A failing case in words: enough to send the same request again. */
export function describeCase(c: FuzzCase, keyLabel: (key: string) => string): string {
  const r = c.request;
  const headers = Object.entries(r.headers).map(([k, v]) => {
    const masked = k === 'authorization' || k === 'x-api-key' ? v.replace(/mnemo_(live|test)_\w+/, (m) => keyLabel(m)) : v;
    return `${k}: ${short(masked).slice(1, -1)}`;
  });
  const body = r.body === undefined ? '' : r.body.length <= 300
    ? `\n  body: ${Buffer.isBuffer(r.body) ? `bytes ${r.body.toString('hex')}` : JSON.stringify(r.body)}`
    : `\n  body: ${JSON.stringify(r.body.slice(0, 120).toString())}… (${r.body.length} chars)`;
  const url = r.url.length > 300 ? `${r.url.slice(0, 200)}… (${r.url.length} chars)` : r.url;
  return `${r.method} ${url}\n  headers: ${headers.join(' | ') || '(none)'}${body}\n  hostile: ${c.notes.join('; ') || '(nothing: a valid-looking request)'}`;
}
