import type { IncomingMessage } from 'node:http';
import { randomBase62 } from '../../core/ids.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's `X-Request-Id` is kept when it is safe to echo; otherwise a fresh `req_…` id. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_ID.test(given)) return given;
  return `req_${randomBase62(20)}`;
}
