import type { FastifyInstance } from 'fastify';

/** A G10 client (`/v1/webhooks`, `/v1/events`, X-API-Key) bound to one key. */
export function g10(app: FastifyInstance, key: string | undefined, headers: Record<string, string> = {}) {
  const h = { ...(key === undefined ? {} : { 'x-api-key': key }), ...headers };
  const url = (id?: string) => `/v1/webhooks${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  return {
    create: (body: unknown) => app.inject({ method: 'POST', url: url(), headers: h, payload: body as object }),
    list: (query = '') => app.inject({ method: 'GET', url: `${url()}${query ? `?${query}` : ''}`, headers: h }),
    get: (id: string) => app.inject({ method: 'GET', url: url(id), headers: h }),
    update: (id: string, body: unknown) => app.inject({ method: 'PATCH', url: url(id), headers: h, payload: body as object }),
    delete: (id: string) => app.inject({ method: 'DELETE', url: url(id), headers: h }),
    publish: (body: unknown, extra: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: '/v1/events', headers: { ...h, ...extra }, payload: body as object }),
  };
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const GENERATED_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** The spec's transfer event data, as a producer would send it. */
export const transfer = {
  id: 'trf_123', reference: 'REF-2026-0001', amount: 150000, fee: 2500, currency: 'NGN', status: 'completed',
  source_wallet_id: 'wal_9', destination: { type: 'bank_account', account_number: '0123456789', bank_code: '058', account_name: 'Ada Obi' },
  completed_at: '2026-03-01T09:00:00.000Z',
};
