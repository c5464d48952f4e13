import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** The value of a Set-Cookie header's cookie `name`, and its attributes. */
export function cookieOf(res: LightMyRequestResponse, name: string): { value: string; header: string } | undefined {
  const raw = res.headers['set-cookie'];
  const headers = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const header = headers.find((h) => h.startsWith(`${name}=`));
  return header === undefined ? undefined : { value: header.slice(name.length + 1).split(';')[0]!, header };
}

export const csrfIn = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

/** A signed-in dashboard session driven through app.inject: its cookie and CSRF token. */
export interface DashboardClient {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  /** A form POST; `_csrf` is added unless `csrf` is false (or another value). */
  post(url: string, form?: Record<string, string>, csrf?: string | false): Promise<LightMyRequestResponse>;
}

export async function signIn(app: FastifyInstance, key: string): Promise<DashboardClient> {
  const form = await app.inject({ method: 'GET', url: '/dashboard/sign-in' });
  const pre = cookieOf(form, 'mnemo_dashboard_signin')!;
  const res = await app.inject({
    method: 'POST', url: '/dashboard/sign-in', headers: { cookie: `mnemo_dashboard_signin=${pre.value}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrfIn(form.body), api_key: key }).toString(),
  });
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}: ${res.body}`);
  const cookie = `mnemo_dashboard=${cookieOf(res, 'mnemo_dashboard')!.value}`;
  const page = await app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  const csrf = csrfIn(page.body);
  return {
    cookie, csrf,
    get: (url) => app.inject({ method: 'GET', url, headers: { cookie } }),
    post: (url, fields = {}, token: string | false = csrf) => app.inject({
      method: 'POST', url, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...fields, ...(token === false ? {} : { _csrf: token }) }).toString(),
    }),
  };
}
