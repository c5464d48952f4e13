import fc from 'fast-check';
import type { FuzzCase, FuzzRequest } from './cases.ts';
import { BAD_QUERY_VALUES, HOSTILE_SEGMENTS } from './cases.ts';
import type { FixtureIds, FuzzKeys } from './fixtures.ts';
import type { Answer } from './oracle.ts';
import type { Transport } from './transport.ts';

/**
 * The dashboard's pages and forms (hidden from /openapi.json): signed in (a key with every scope, a read-only key),
 * with a bad or no session, a missing or wrong CSRF token, and hostile form fields, query values and content types.
 */
export interface DashboardRoute {
  method: 'GET' | 'POST';
  /** `{name}` marks a path parameter. */
  path: string;
  query?: string[];
  fields?: string[];
}

export const DASHBOARD_ROUTES: DashboardRoute[] = [
  { method: 'GET', path: '/dashboard' },
  { method: 'GET', path: '/dashboard/sign-in', query: ['next', 'ended'] },
  { method: 'POST', path: '/dashboard/sign-in', fields: ['_csrf', 'api_key', 'next'] },
  { method: 'POST', path: '/dashboard/sign-out', fields: ['_csrf'] },
  { method: 'GET', path: '/dashboard/approvals', query: ['status', 'cursor', 'workspace'] },
  { method: 'GET', path: '/dashboard/approvals/{id}' },
  { method: 'POST', path: '/dashboard/approvals/{id}', fields: ['_csrf', 'action', 'reason'] },
  { method: 'GET', path: '/dashboard/memories', query: ['q', 'search', 'threshold', 'offset', 'type', 'tag', 'deleted', 'workspace', 'expired'] },
  { method: 'GET', path: '/dashboard/memories/{id}' },
  { method: 'GET', path: '/dashboard/memories/{id}/history', query: ['offset'] },
  { method: 'POST', path: '/dashboard/memories/{id}/supersede', fields: ['_csrf', 'by'] },
  { method: 'GET', path: '/dashboard/memories/{id}/edit' },
  { method: 'POST', path: '/dashboard/memories/{id}', fields: ['_csrf', 'title', 'content', 'memory_type', 'tags'] },
  { method: 'POST', path: '/dashboard/memories/{id}/delete', fields: ['_csrf'] },
  { method: 'GET', path: '/dashboard/analytics', query: ['timeframe'] },
  { method: 'GET', path: '/dashboard/webhooks' },
  { method: 'GET', path: '/dashboard/webhooks/{kind}/{id}', query: ['offset', 'requeued'] },
  { method: 'POST', path: '/dashboard/webhooks/{kind}/{id}/deliveries/{deliveryId}/redeliver', fields: ['_csrf'] },
  { method: 'GET', path: '/dashboard/secrets', query: ['tag', 'cursor'] },
  { method: 'POST', path: '/dashboard/secrets/{name}/reveal', fields: ['_csrf'] },
  { method: 'GET', path: '/dashboard/audit', query: ['action', 'actor', 'resource', 'cursor'] },
  // Reviews and the managing pages (docs/dashboard.md, "Managing").
  { method: 'GET', path: '/dashboard/reviews', query: ['state', 'offset'] },
  { method: 'GET', path: '/dashboard/reviews/{id}', query: ['decided', 'proposal'] },
  { method: 'POST', path: '/dashboard/reviews/{id}', fields: ['_csrf', 'decision', 'proposal', 'all'] },
  { method: 'GET', path: '/dashboard/memories/new', query: ['supersedes'] },
  { method: 'POST', path: '/dashboard/memories/new', fields: ['_csrf', 'title', 'content', 'memory_type', 'tags', 'metadata', 'supersedes'] },
  { method: 'POST', path: '/dashboard/memories/{id}', fields: ['_csrf', 'title', 'content', 'memory_type', 'tags', 'metadata'] },
  { method: 'GET', path: '/dashboard/memories/{id}/forget' },
  { method: 'POST', path: '/dashboard/memories/selection', fields: ['_csrf', 'action', 'id', 'id'] },
  { method: 'POST', path: '/dashboard/memories/selection/forget', fields: ['_csrf', 'id'] },
  { method: 'GET', path: '/dashboard/secrets/new' },
  { method: 'POST', path: '/dashboard/secrets/new', fields: ['_csrf', 'name', 'value', 'tags', 'expires_in'] },
  { method: 'GET', path: '/dashboard/secrets/{name}/edit', query: ['done', 'version'] },
  { method: 'POST', path: '/dashboard/secrets/{name}/version', fields: ['_csrf', 'value', 'tags', 'expires_in'] },
  { method: 'POST', path: '/dashboard/secrets/{name}/delete', fields: ['_csrf'] },
  { method: 'GET', path: '/dashboard/mcp-resources', query: ['cursor', 'registered', 'deleted'] },
  {
    method: 'POST', path: '/dashboard/mcp-resources',
    fields: ['_csrf', 'uri', 'name', 'description', 'permissions', 'requires_approval', 'approvers', 'auto_approve', 'time_window', 'requesters', 'value'],
  },
  { method: 'GET', path: '/dashboard/mcp-resources/edit', query: ['uri', 'saved'] },
  {
    method: 'POST', path: '/dashboard/mcp-resources/edit',
    fields: ['_csrf', 'uri', 'name', 'description', 'permissions', 'requires_approval', 'approvers', 'auto_approve', 'time_window', 'requesters', 'value'],
  },
  { method: 'POST', path: '/dashboard/mcp-resources/delete', fields: ['_csrf', 'uri', 'confirm'] },
  { method: 'GET', path: '/dashboard/api-keys', query: ['cursor', 'revoked'] },
  { method: 'POST', path: '/dashboard/api-keys', fields: ['_csrf', 'name', 'tier', 'scopes', 'scopes'] },
  { method: 'POST', path: '/dashboard/api-keys/{id}/rotate', fields: ['_csrf', 'grace_seconds'] },
  { method: 'POST', path: '/dashboard/api-keys/{id}/revoke', fields: ['_csrf'] },
  { method: 'POST', path: '/dashboard/webhooks', fields: ['_csrf', 'kind', 'url', 'events', 'description', 'max_attempts'] },
  { method: 'POST', path: '/dashboard/webhooks/{kind}/{id}/status', fields: ['_csrf', 'status', 'back'] },
  { method: 'GET', path: '/dashboard/assets/{name}' },
  { method: 'GET', path: '/dashboard/{page}' },
];

export const dashboardRouteName = (r: DashboardRoute): string => `DASHBOARD ${r.method} ${r.path}`;

/** A signed-in session: the cookie header and the CSRF token of its forms. */
interface Session { cookie: string; csrf: string }

export interface DashboardSessions {
  /** A key with every scope, for most cases. */
  full: Session;
  readOnly: Session;
  /** Only for sign-out, whose valid cases end it. */
  spare: Session;
  /** A sign-in form's cookie and token (the double submit of POST /dashboard/sign-in). */
  signIn: Session;
  /** A key to sign in with. */
  key: string;
}

const SESSION_COOKIE = 'mnemo_dashboard';
const SIGN_IN_COOKIE = 'mnemo_dashboard_signin';
/** Markup a hostile value carries: a page that shows it unescaped has an injection. */
const MARKER = '<x-fuzz id=1>';

function cookieValue(a: Answer, name: string): string {
  const raw = a.headers?.['set-cookie'];
  const all = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  const found = all.find((h) => h.startsWith(`${name}=`));
  if (!found) throw new Error(`dashboard: no ${name} cookie in ${a.status} ${a.body.slice(0, 200)}`);
  return found.slice(name.length + 1).split(';')[0]!;
}

const csrfIn = (body: string): string => {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!m) throw new Error(`dashboard: no CSRF token in ${body.slice(0, 200)}`);
  return m[1]!;
};

const FORM = 'application/x-www-form-urlencoded';

async function signInForm(send: Transport): Promise<Session> {
  const form = await send({ method: 'GET', url: '/dashboard/sign-in', headers: {} }, 10_000);
  return { cookie: `${SIGN_IN_COOKIE}=${cookieValue(form, SIGN_IN_COOKIE)}`, csrf: csrfIn(form.body) };
}

async function signIn(send: Transport, key: string): Promise<Session> {
  const form = await signInForm(send);
  const res = await send({
    method: 'POST', url: '/dashboard/sign-in', headers: { cookie: form.cookie, 'content-type': FORM },
    body: new URLSearchParams({ _csrf: form.csrf, api_key: key }).toString(),
  }, 10_000);
  if (res.status !== 303) throw new Error(`dashboard sign-in: ${res.status} ${res.body.slice(0, 200)}`);
  const cookie = `${SESSION_COOKIE}=${cookieValue(res, SESSION_COOKIE)}`;
  const page = await send({ method: 'GET', url: '/dashboard/analytics', headers: { cookie } }, 10_000);
  return { cookie, csrf: csrfIn(page.body) };
}

export async function dashboardSessions(send: Transport, keys: FuzzKeys): Promise<DashboardSessions> {
  return {
    full: await signIn(send, keys.pool[1]!), readOnly: await signIn(send, keys.readOnly), spare: await signIn(send, keys.pool[2]!),
    signIn: await signInForm(send), key: keys.pool[3]!,
  };
}

/** Valid-looking values of path parameters: existing ids of both tenants where there are some. */
function pathValues(route: DashboardRoute, param: string, ids: FixtureIds): string[] {
  const of = (prefix: string) => ids.byPrefix.find(([p]) => p === prefix)?.[1] ?? [];
  if (param === 'kind') return ['g9', 'g10', 'g11'];
  if (param === 'name') return route.path.includes('assets') ? ['dashboard.js', 'dashboard.css', 'chart.umd.min.js'] : of('/v1/security/secrets');
  if (param === 'page') return ['approvals', 'nope', 'sign-in', 'assets'];
  if (param === 'deliveryId') return ['dlv_1', 'f0f0f0f0-0000-4000-8000-000000000000'];
  if (route.path.startsWith('/dashboard/memories')) return [...of('/api/v1/memories'), 'f0f0f0f0-0000-4000-8000-000000000000'];
  if (route.path.startsWith('/dashboard/webhooks')) return [...of('/api/v1/webhooks'), ...of('/v1/webhooks')];
  if (route.path.startsWith('/dashboard/reviews')) return ['ing_AAAAAAAAAAAAAAAAAAAAAAAA', 'f0f0f0f0-0000-4000-8000-000000000000'];
  if (route.path.startsWith('/dashboard/api-keys')) return ['key_AAAAAAAAAAAAAAAAAAAAAAAA', 'f0f0f0f0-0000-4000-8000-000000000000'];
  return ['appr_1', 'appr_AAAAAAAAAAAAAAAAAAAA', 'f0f0f0f0-0000-4000-8000-000000000000'];
}

/** Plausible values of query parameters and form fields (URL-encoded as they are sent). */
const VALID: Record<string, string[]> = {
  next: ['%2Fdashboard%2Fmemories', '%2F%2Fevil.example%2Fx', '%2Fdashboard%2F..%2F..%2Fx', 'https%3A%2F%2Fevil.example'],
  ended: ['out', 'key', 'x'], status: ['pending', 'all', 'approved', 'denied', 'expired', 'active', 'disabled'], cursor: ['x', 'eyJhIjoxfQ'],
  workspace: ['default', 'default', 'default', 'fuzz-ws'], q: ['deploy+notes', 'release', 'zeta'], search: ['hybrid', 'semantic'],
  threshold: ['0.5', '0', '1'], offset: ['0', '25', '50'], type: ['project', 'context'], tag: ['fuzz', 'ops%2Ct1'], deleted: ['x'],
  timeframe: ['1h', '24h', '7d', '30d'], requeued: ['dlv_1'], action: ['approve', 'deny', 'secret.*'], actor: ['user-1'],
  resource: ['secret%3A*'], reason: ['checked', ''], title: ['Deploy+notes', ''], content: ['Deploys+run+on+Tuesdays'],
  memory_type: ['workflow', 'context'], tags: ['ops%2C+deploy', ''],
  state: ['pending_review', 'completed'], decided: ['approve'], proposal: ['p1', 'p9'], decision: ['approve', 'reject'], all: ['1'],
  supersedes: ['f0f0f0f0-0000-4000-8000-000000000000'], metadata: ['%7B%22floor%22%3A3%7D', '%7B%22floor%22%3A3', '%5B1%5D', ''],
  id: ['f0f0f0f0-0000-4000-8000-000000000000', 'x'], done: ['created', 'updated'], version: ['1', '99'], name: ['ci.token', 'Fuzz+name', ''],
  value: ['tok-1', ''], expires_in: ['30d', 'never', 'soon', ''], registered: ['svc%3A%2F%2Fsecrets%2Ffuzz%2F*'],
  uri: ['svc%3A%2F%2Fsecrets%2Ffuzz%2F*', 'svc%3A%2F%2Fcustom%2Ffuzz', 'nope'], description: ['Fuzz', ''], permissions: ['read', 'write', 'x'],
  requires_approval: ['1', ''], approvers: ['alice%2C+bob', ''], auto_approve: ['1', ''], time_window: ['09%3A00-17%3A00+Europe%2FLondon', '25%3A00-1'],
  requesters: ['ci-bot', ''], confirm: ['1', ''], saved: ['1'], revoked: ['x'], tier: ['free', 'pro', 'enterprise', 'x'],
  scopes: ['memories%3Aread', 'secrets%3Aread', 'x'], grace_seconds: ['0', '3600', '-1'], kind: ['g9', 'g10', 'g11'],
  url: ['https%3A%2F%2Fhooks.example.com%2Ffuzz', 'http%3A%2F%2F127.0.0.1%2F'], events: ['memory.created', 'memory.exploded'],
  max_attempts: ['1', '5', '0'], back: ['list', ''],
};

const HOSTILE_VALUES = [
  ...BAD_QUERY_VALUES, '%3Cx-fuzz%20id%3D1%3E', '%FF%FE', '%C0%AF', '%00', '%ED%A0%80', '%F0%9F%92%A9', 'constructor', 'toString',
];

const valueArb = (name: string, hostile: boolean): fc.Arbitrary<{ text: string; hostile: boolean }> => {
  const valid = fc.constantFrom(...(VALID[name] ?? ['x'])).map((text) => ({ text, hostile: false }));
  if (!hostile) return valid;
  const bad = fc.constantFrom(...HOSTILE_VALUES).map((text) => ({ text, hostile: true }));
  const long = fc.constantFrom(300, 20_000, 300 * 1024).map((n) => ({ text: 'a'.repeat(n), hostile: true }));
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: bad }, { weight: 1, arbitrary: long });
};

const EXTRA_PAIRS = [
  '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=1', '_csrf=&_csrf=x', '%zz=1', '&&&', '=x', 'x',
  'a[]=1&a[]=2', 'action=approve&action=deny', '%3Cx-fuzz%3E=1',
];

const HOSTILE_COOKIES = [
  '', `${SESSION_COOKIE}=`, `${SESSION_COOKIE}=x`, `${SESSION_COOKIE}=%zz`, `${SESSION_COOKIE}=__proto__`, `${SESSION_COOKIE}=${'a'.repeat(4000)}`,
  `${SESSION_COOKIE}`, ';;;', '=x', `${SESSION_COOKIE}="unterminated`,
];

type Who = 'session' | 'read-only' | 'no cookie' | 'bad cookie' | 'bad csrf' | 'duplicate cookie';

const whoArb = (post: boolean): fc.Arbitrary<Who> => fc.oneof(
  { weight: 8, arbitrary: fc.constant<Who>('session') }, { weight: 1, arbitrary: fc.constant<Who>('read-only') },
  { weight: 1, arbitrary: fc.constant<Who>('no cookie') }, { weight: 1, arbitrary: fc.constant<Who>('bad cookie') },
  { weight: post ? 2 : 0, arbitrary: fc.constant<Who>('bad csrf') }, { weight: 1, arbitrary: fc.constant<Who>('duplicate cookie') },
);

const CONTENT_TYPES: [weight: number, value: string | null][] = [
  [12, FORM], [1, `${FORM}; charset=utf-16`], [1, 'application/json'], [1, 'multipart/form-data; boundary=x'], [1, 'text/plain'],
  [1, null], [1, `${FORM}; charset=%zz`],
];

/** Cases of one dashboard route: mostly signed in with valid fields, each part sometimes hostile. */
export function dashboardCases(route: DashboardRoute, ids: FixtureIds, sessions: DashboardSessions): fc.Arbitrary<FuzzCase> {
  const post = route.method === 'POST';
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const focus = fc.constantFrom('path', 'query', 'fields', 'session', 'content-type', 'everything', 'nothing');
  return focus.chain((f) => {
    const on = (part: string) => f === part || f === 'everything';
    const path = fc.tuple(...params.map((p) => {
      const valid = fc.constantFrom(...pathValues(route, p, ids)).map((v) => ({ text: encodeURIComponent(v), hostile: false }));
      return on('path') ? fc.oneof(valid, fc.constantFrom(...HOSTILE_SEGMENTS).map((text) => ({ text, hostile: true }))) : valid;
    }));
    const query = fc.tuple(...(route.query ?? []).map((q) => fc.option(valueArb(q, on('query')), { freq: 2 })));
    const fields = fc.tuple(...(route.fields ?? []).filter((n) => n !== '_csrf').map((n) => fc.option(valueArb(n, on('fields')), { freq: 4 })));
    const extra = on('fields') || on('query') ? fc.option(fc.constantFrom(...EXTRA_PAIRS), { freq: 2 }) : fc.constant(null);
    const type = post && on('content-type') ? fc.oneof(...CONTENT_TYPES.map(([weight, v]) => ({ weight, arbitrary: fc.constant(v) }))) : fc.constant(FORM);
    const who = on('session') ? whoArb(post) : fc.constant<Who>('session');
    const head = !post && on('everything') ? fc.boolean() : fc.constant(false);
    return fc.tuple(path, query, fields, extra, type, who, fc.constantFrom(...HOSTILE_COOKIES), head);
  }).map(([path, query, fields, extra, type, who, badCookie, head]) => {
    const notes: string[] = [];
    let url = route.path;
    params.forEach((p, i) => {
      url = url.replace(`{${p}}`, path[i]!.text);
      if (path[i]!.hostile) notes.push(`{${p}}=${short(path[i]!.text)}`);
    });
    const pairs: string[] = [];
    (route.query ?? []).forEach((q, i) => {
      const v = query[i];
      if (v === null || v === undefined) return;
      pairs.push(`${q}=${v.text}`);
      if (v.hostile) notes.push(`?${q}=${short(v.text)}`);
    });
    if (!post && extra !== null) { pairs.push(extra); notes.push(`query += ${extra}`); }
    if (pairs.length > 0) url = `${url}?${pairs.join('&')}`;

    // The sign-in form and its POST: "signed in" means holding the form's cookie and token, not a session.
    const signingIn = route.path === '/dashboard/sign-in';
    const session = signingIn ? sessions.signIn : route.path === '/dashboard/sign-out' ? sessions.spare : who === 'read-only' ? sessions.readOnly : sessions.full;
    const headers: Record<string, string> = {};
    if (who === 'session' || who === 'read-only' || who === 'bad csrf') headers.cookie = session.cookie;
    else if (who === 'bad cookie') { if (badCookie) headers.cookie = badCookie; notes.push(`Cookie: ${short(badCookie)}`); }
    else if (who === 'duplicate cookie') { headers.cookie = `${SESSION_COOKIE}=x; ${session.cookie}`; notes.push('session cookie twice, a bad one first'); }
    else notes.push('no cookie');
    if (who === 'read-only') notes.push('read-only key');

    // Fastify answers a request line past Node's 16 KiB header limit with a 431 that has a body, unreadable after a HEAD.
    const asHead = head && url.length < 8 * 1024;
    const request: FuzzRequest = { method: asHead ? 'HEAD' : route.method, url, headers };
    if (asHead) notes.push('HEAD');
    if (post) {
      const body: string[] = [];
      if (who !== 'bad csrf') body.push(`_csrf=${encodeURIComponent(session.csrf)}`);
      else notes.push('CSRF token missing');
      (route.fields ?? []).filter((n) => n !== '_csrf').forEach((n, i) => {
        const v = fields[i];
        if (v === null || v === undefined) return;
        body.push(`${n}=${n === 'api_key' && !v.hostile ? sessions.key : v.text}`);
        if (v.hostile) notes.push(`${n}=${short(v.text)}`);
      });
      if (extra !== null) { body.push(extra); notes.push(`form += ${extra}`); }
      request.body = type === 'application/json'
        ? JSON.stringify(Object.fromEntries(body.map((p) => p.split('=')).map(([k, v]) => [decodeSafe(k ?? ''), decodeSafe(v ?? '')])))
        : body.join('&');
      if (type !== null) request.headers['content-type'] = type;
      if (type !== FORM) notes.push(type === null ? 'no Content-Type' : `Content-Type: ${type}`);
    }
    return { route: dashboardRouteName(route), request, notes };
  });
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

const short = (s: string) => (s.length > 40 ? `${JSON.stringify(s.slice(0, 3))}…(${s.length} chars)` : JSON.stringify(s));

/** Problems of a dashboard answer beyond the common oracle: markup shown unescaped, the control tenant's secret shown. */
export function dashboardProblems(a: Answer, controlSecret: string | undefined): string[] {
  const problems: string[] = [];
  if (a.body.includes(MARKER.slice(0, 7))) problems.push('a hostile value shown unescaped (<x-fuzz in the page)');
  if (controlSecret && a.body.includes(controlSecret)) problems.push("the control tenant's secret value in the page");
  return problems;
}
