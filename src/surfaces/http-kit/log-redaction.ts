/**
 * What of a request URL may be logged. WebSocket clients in browsers send their key as `?access_token=`, and the
 * query parser decodes parameter names before the socket reads them, so `access%5Ftoken` or `%61ccess_token`
 * authenticate too: parameters are judged by their decoded name, not by their spelling. Names that look like a
 * credential in any case or punctuation (`ACCESS_TOKEN`, `api_key`, `apikey`, `X-API-Key`, `token`, …) are masked
 * as well, although they do not authenticate: a key a client put there is still a secret. Last, anything shaped like
 * a Mnemo key is masked wherever it appears (a key pasted into a path).
 */

/** Parameter names, lowercased with everything but letters and digits removed, whose values are never logged. */
const CREDENTIAL_NAMES = new Set(['accesstoken', 'token', 'apikey', 'xapikey', 'key', 'authorization', 'auth', 'bearer', 'password', 'secret']);

/** The key format of api-key.format.ts (`mnemo_<mode>_` + 36 base62 characters). */
const KEY_TEXT = /mnemo_(?:live|test)_[0-9A-Za-z]{36}/g;

/** A parameter name as the query parser reads it: `+` is a space, each `%XX` the byte it names. */
const decodedName = (raw: string): string =>
  raw.replace(/\+/g, ' ').replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const isCredentialName = (raw: string): boolean => CREDENTIAL_NAMES.has(decodedName(raw).toLowerCase().replace(/[^a-z0-9]/g, ''));

/** The URL with every credential value masked as `[redacted]`, for logs. */
export function redactUrlCredentials(url: string): string {
  const q = url.indexOf('?');
  const query = q === -1 ? '' : url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    return eq !== -1 && isCredentialName(name) ? `${name}=[redacted]` : pair;
  }).join('&');
  const masked = q === -1 ? url : `${url.slice(0, q)}?${query}`;
  return masked.replace(KEY_TEXT, '[redacted]');
}
