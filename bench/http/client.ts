/** Plain JSON calls to the G1 API for seeding and sanity checks (the measurements themselves use autocannon). */
export const MEMORIES_PATH = '/api/v1/memories';
export const SEARCH_PATH = '/api/v1/memories/search';

export function jsonHeaders(apiKey: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-api-key': apiKey };
}

export async function postJson(baseUrl: string, path: string, apiKey: string, body: unknown, expected: number):
  Promise<unknown> {
  const res = await fetch(baseUrl + path, { method: 'POST', headers: jsonHeaders(apiKey), body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expected) {
    throw new Error(`POST ${path} answered ${res.status}, expected ${expected}: ${text.slice(0, 500)}`);
  }
  return JSON.parse(text) as unknown;
}
