/**
 * JSON with object keys sorted at every depth (and `undefined` members left out), so that two requests that differ
 * only in key order digest alike: the request fingerprints of G10 producer events and of G11 idempotent requests.
 * The caller bounds the depth first (json-limits.ts, or a schema): this recurses.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
