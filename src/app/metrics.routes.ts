import { sameSecret } from '../core/api-keys/api-key.format.ts';
import { isIP } from 'node:net';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MnemoMetrics } from '../adapters/metrics/metrics.registry.ts';
import type { MetricsAccess } from './config.ts';

export const METRICS_PATH = '/metrics';

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (`::ffff:127.0.0.1`, what a dual-stack socket reports). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.split('.')[0] === '127';
  return isIP(address) === 6 && /^(0{0,4}:){1,7}0{0,3}1$|^::1$/.test(address);
}

/** Why a request may not read the metrics, or null when it may. */
function refusal(access: MetricsAccess, req: FastifyRequest): { status: 401 | 403; message: string } | null {
  if (access.mode === 'loopback') {
    // A reverse proxy on the same host connects from loopback: what it relays came from elsewhere, so it is refused.
    const relayed = req.headers.forwarded !== undefined || req.headers['x-forwarded-for'] !== undefined;
    if (!isLoopback(req.socket.remoteAddress) || relayed) {
      return { status: 403, message: 'metrics are served to loopback clients only (MNEMO_METRICS=loopback)' };
    }
    return null;
  }
  if (access.mode === 'token') {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (!match || !sameSecret(match[1]!, access.token)) return { status: 401, message: 'a valid metrics bearer token is required' };
  }
  return null;
}

/**
 * `GET /metrics`: the Prometheus text exposition of this process, for operators. Outside every surface (no API key,
 * no tier rate limit, no audit): its own guard is MNEMO_METRICS. Refusals are plain text, as the answer is; with
 * `off` the route does not exist (404 like any unknown path).
 */
export const metricsRoutes: FastifyPluginAsync<{ metrics: MnemoMetrics; access: MetricsAccess }> = async (app, { metrics, access }) => {
  if (access.mode === 'off') return;
  app.get(METRICS_PATH, { schema: { hide: true } }, async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    const refused = refusal(access, req);
    if (refused) {
      if (refused.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="mnemo-metrics"');
      return reply.status(refused.status).type('text/plain; charset=utf-8').send(`${refused.message}\n`);
    }
    return reply.type(metrics.contentType).send(await metrics.render());
  });
};
