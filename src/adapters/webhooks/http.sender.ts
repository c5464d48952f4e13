import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { OutgoingDelivery, SendOutcome, WebhookSender } from '../../core/webhooks/webhook-sender.port.ts';
import { systemResolver, vetDestination, type Resolver } from './address-guard.ts';

export interface HttpSenderOptions {
  /** Private/loopback/… ranges the operator allows (MNEMO_WEBHOOK_ALLOW_CIDRS), already validated. */
  allowCidrs: readonly string[];
  /** Whole attempt: DNS, connect, TLS, response headers and the capped body read. Spec: receivers answer within 5 s. */
  timeoutMs?: number;
  /** How much of a receiver's answer is read (kept as the error excerpt); the connection is dropped after that. */
  maxResponseBytes?: number;
  resolve?: Resolver;
}

/** An outcome before its duration is known (Omit distributed over the union). */
type Unsent<T> = T extends unknown ? Omit<T, 'durationMs'> : never;
type Settle = (outcome: Unsent<SendOutcome>) => void;

/** A lookup that answers with the vetted address only: the connection goes where the check looked. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

const errorText = (err: unknown): string => {
  const e = err as Partial<NodeJS.ErrnoException>;
  const message = e?.message ?? String(err);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
};

/**
 * Webhook deliveries over node:http/https. Redirects are never followed (a 3xx is a failure), each attempt uses a
 * fresh connection (agent: false) to the address vetted by the address guard, and a receiver's answer is read only
 * up to `maxResponseBytes` before the socket is dropped, so a hostile receiver costs at most that much and the timeout.
 */
export function createHttpWebhookSender(options: HttpSenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxResponseBytes ?? 4096;
  const resolve = options.resolve ?? systemResolver;

  return {
    send(delivery: OutgoingDelivery): Promise<SendOutcome> {
      const started = performance.now();
      return new Promise<SendOutcome>((done) => {
        let settled = false;
        let req: http.ClientRequest | null = null;
        const cleanups: (() => void)[] = [];
        const settle: Settle = (outcome) => {
          if (settled) return;
          settled = true;
          for (const c of cleanups) c();
          req?.destroy();
          done({ ...outcome, durationMs: Math.round(performance.now() - started) });
        };

        // A failure status already received, with the start of its body: what a timeout reports if the body stalls.
        let answered: { status: number; excerpt: () => string } | null = null;
        const timer = setTimeout(() => settle(answered
          ? { status: answered.status, bodyExcerpt: answered.excerpt() }
          : { status: null, error: `timed out after ${timeoutMs} ms` }), timeoutMs);
        cleanups.push(() => clearTimeout(timer));
        if (delivery.signal) {
          const onAbort = () => settle({ status: null, error: 'aborted (shutting down)', aborted: true });
          if (delivery.signal.aborted) return onAbort();
          delivery.signal.addEventListener('abort', onAbort, { once: true });
          cleanups.push(() => delivery.signal?.removeEventListener('abort', onAbort));
        }

        let url: URL;
        try {
          url = new URL(delivery.url);
        } catch {
          return settle({ status: null, error: 'invalid URL' });
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return settle({ status: null, error: 'refused: URL must use http or https' });
        const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

        void vetDestination(url.hostname, options.allowCidrs, resolve).then((vetted) => {
          if (settled) return;
          if (!vetted.ok) return settle({ status: null, error: vetted.reason });
          const body = Buffer.from(delivery.body, 'utf8');
          const requestOptions: https.RequestOptions = {
            method: 'POST',
            protocol: url.protocol,
            hostname: host,
            port: url.port || undefined,
            path: `${url.pathname}${url.search}`,
            headers: { ...delivery.headers, 'Content-Length': String(body.length) },
            agent: false,
            lookup: pinnedLookup(vetted.address, vetted.family),
            // TLS still verifies the certificate against the URL's host name, not the address.
            ...(isIP(host) ? {} : { servername: host }),
            ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
          };
          req = (url.protocol === 'https:' ? https : http).request(requestOptions, (res) => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) return settle({ status, bodyExcerpt: '' });
            // A failure: keep the start of the answer for last_error, then drop the connection.
            const chunks: Buffer[] = [];
            let size = 0;
            const excerpt = () => Buffer.concat(chunks).toString('utf8').replace(/\uFFFD+$/, '');
            answered = { status, excerpt };
            const finish = () => settle({ status, bodyExcerpt: excerpt() });
            res.on('data', (chunk: Buffer) => {
              const take = chunk.subarray(0, maxBytes - size);
              chunks.push(take);
              size += take.length;
              if (size >= maxBytes) finish();
            });
            res.on('end', finish);
            res.on('error', finish);
            res.on('aborted', finish);
          });
          req.on('error', (err) => settle({ status: null, error: errorText(err) }));
          req.end(body);
        }).catch((err: unknown) => settle({ status: null, error: errorText(err) }));
      });
    },
  };
}
