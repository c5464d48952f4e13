import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { SQLITE_SYNCHRONOUS, type SqliteSynchronous } from '../adapters/storage/sqlite/sqlite.database.ts';
import { parseAllowCidrs } from '../core/webhooks/address-policy.ts';
import { EXAMPLE_UNIT_PRICES, type UnitPrices } from '../core/analytics/cost-model.ts';

/**
 * The whole configuration, parsed once at start from the environment. This is the only module that reads
 * process.env. A bad value stops the start with a message naming the variable.
 */
export type EmbeddingsKind = 'local' | 'hashing' | 'openai';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** The SQLite file inside dataDir. */
  databaseFile: string;
  /** `MNEMO_SQLITE_SYNCHRONOUS`: `full` (an acknowledged write survives power loss) or `normal` (faster; may not). */
  sqliteSynchronous: SqliteSynchronous;
  embeddings:
    /** `workers`: MNEMO_EMBEDDING_WORKERS, model threads; undefined = the adapter's default (one per CPU, at most 4). */
    | { kind: 'local'; workers: number | undefined }
    | { kind: 'hashing'; dimensions: number }
    | { kind: 'openai'; url: string; model: string; apiKey: string | undefined; dimensions: number | undefined };
  maxContentBytes: number;
  bodyLimitBytes: number;
  /** `MNEMO_BODY_DRAIN_BYTES`: an answer given before the body was read (e.g. 413) waits for the client to finish
   * sending up to this many more bytes, so that it can read the answer; 0: answer and close at once. */
  bodyDrainBytes: number;
  maxEmbedChars: number;
  logLevel: LogLevel;
  /** Enterprise tier's gateway limit per minute; null = unlimited (the spec's "custom"). */
  enterpriseRequestsPerMinute: number | null;
  shutdownTimeoutMs: number;
  /** A search running longer answers a timeout error (G4: 408 SEARCH_TIMEOUT), counted from the request's arrival. */
  searchTimeoutMs: number;
  /** `MNEMO_MAX_CONCURRENT_SEARCHES`: searches running at once; more wait in line. */
  maxConcurrentSearches: number;
  /** `MNEMO_MAX_QUEUED_SEARCHES`: searches waiting for a slot; past it a search is 503 at once. */
  maxQueuedSearches: number;
  /** `MNEMO_MAX_EVENT_LOOP_DELAY_MS`: past this mean event-loop delay every request but health is 503; 0: off. */
  maxEventLoopDelayMs: number;
  /** `MNEMO_WEBHOOK_ALLOW_CIDRS`: non-public ranges webhooks may still reach (normalised CIDRs; empty = none). */
  webhookAllowCidrs: string[];
  /** `MNEMO_WEBHOOK_TIMEOUT_MS`: one delivery attempt (connect, TLS, answer) may take this long; spec: 5 s. */
  webhookTimeoutMs: number;
  /** `MNEMO_EVENT_RETENTION_HOURS`: events (stream resume, webhook history) are kept this long, then pruned. */
  eventRetentionHours: number;
  /** `MNEMO_MAX_STREAMS_PER_TENANT`: concurrent stream connections (SSE, WebSockets) of one tenant, all keys. */
  maxStreamsPerTenant: number;
  /** `MNEMO_MAX_STREAMS`: concurrent stream connections of this process. */
  maxStreams: number;
  /**
   * `MNEMO_REDIS_URL`: state shared by every node (rate-limit windows, stream caps per key and tenant, the
   * user.activity window, the turn of the periodic events); null: kept in this process.
   */
  redisUrl: string | null;
  /** `MNEMO_DATABASE_URL`: PostgreSQL + pgvector instead of the SQLite file; null: SQLite in `dataDir`. */
  databaseUrl: string | null;
  /** `MNEMO_DATABASE_POOL_SIZE`: connections this process opens to PostgreSQL. */
  databasePoolSize: number;
  /**
   * `MNEMO_MASTER_KEY`: the master key(s) sealing secrets, comma-separated, the first sealing new values; null: the
   * data directory's `master.key` (app/keyring.factory.ts). Checked when the keyring is loaded, never printed.
   */
  masterKey: string | null;
  /**
   * `MNEMO_DASHBOARD_URL`: where people answer MCP approvals; an approval's approvalUrl is this plus
   * `/approvals/<approvalId>`. Default `http://HOST:PORT/dashboard`. No trailing slash.
   */
  dashboardUrl: string;
  /**
   * `MNEMO_METRICS`: who may read `GET /metrics` — `off` (404), `loopback` (default: requests from 127.0.0.0/8 or ::1
   * that no proxy relayed) or `token` (`Authorization: Bearer <MNEMO_METRICS_TOKEN>`, from anywhere).
   */
  metrics: MetricsAccess;
  /**
   * `MNEMO_COST_STORAGE_GB_MONTH`, `MNEMO_COST_COMPUTE_SECOND`, `MNEMO_COST_API_CALLS_PER_1000`: the unit prices of
   * the G7 cost model (core/analytics/cost-model.ts); the defaults are examples, not real prices.
   */
  costPrices: UnitPrices;
  /** `MNEMO_ANALYTICS`: `on` (default) measures every request for G7; `off` records none (G7 request figures stay 0). */
  analytics: boolean;
  /**
   * `MNEMO_SEARCH_THREADS`: worker threads that run SQLite's exact vector scan off the event loop (default: the
   * cores available, at most 16); 0 scans on the event loop.
   */
  searchThreads: number;
  /**
   * `MNEMO_TRUST_PROXY` (on|off, default off): trust `X-Forwarded-For` / `X-Forwarded-Proto` from the proxy in front,
   * so the request's address and protocol are the client's (the dashboard's session cookie is then Secure when the
   * proxy terminated TLS). Off: only the socket counts.
   */
  trustProxy: boolean;
  /**
   * `MNEMO_MCP_ALLOWED_ORIGINS`: comma-separated hostnames whose browser pages may call `/mcp` (beside loopback names
   * and the dashboard URL's host, always allowed); `*` turns the Origin check off. Requests without Origin pass.
   */
  mcpAllowedOrigins: readonly string[] | '*';
}

export type MetricsAccess = { mode: 'off' } | { mode: 'loopback' } | { mode: 'token'; token: string };

/** A metrics token shorter than this is refused at start: it guards the endpoint from anywhere on the network. */
export const METRICS_TOKEN_MIN_LENGTH = 32;

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Documented in README's configuration table; keep the two in step. */
export const CONFIG_VARIABLES = [
  'HOST', 'PORT', 'MNEMO_DATA_DIR', 'MNEMO_EMBEDDINGS', 'MNEMO_EMBEDDINGS_URL', 'MNEMO_EMBEDDINGS_MODEL',
  'MNEMO_EMBEDDINGS_API_KEY', 'MNEMO_EMBEDDINGS_DIMENSIONS', 'MNEMO_EMBEDDING_WORKERS', 'MNEMO_MAX_CONTENT_BYTES', 'MNEMO_BODY_LIMIT_BYTES',
  'MNEMO_MAX_EMBED_CHARS', 'MNEMO_LOG_LEVEL', 'MNEMO_ENTERPRISE_RATE_LIMIT', 'MNEMO_SHUTDOWN_TIMEOUT_MS', 'MNEMO_SEARCH_TIMEOUT_MS',
  'MNEMO_DATABASE_URL', 'MNEMO_DATABASE_POOL_SIZE', 'MNEMO_REDIS_URL', 'MNEMO_WEBHOOK_ALLOW_CIDRS',
  'MNEMO_EVENT_RETENTION_HOURS', 'MNEMO_WEBHOOK_TIMEOUT_MS', 'MNEMO_SQLITE_SYNCHRONOUS', 'MNEMO_BODY_DRAIN_BYTES',
  'MNEMO_MAX_STREAMS_PER_TENANT', 'MNEMO_MAX_STREAMS',
  'MNEMO_MAX_CONCURRENT_SEARCHES', 'MNEMO_MAX_QUEUED_SEARCHES', 'MNEMO_MAX_EVENT_LOOP_DELAY_MS', 'MNEMO_MASTER_KEY',
  'MNEMO_DASHBOARD_URL', 'MNEMO_METRICS', 'MNEMO_METRICS_TOKEN', 'MNEMO_COST_STORAGE_GB_MONTH', 'MNEMO_COST_COMPUTE_SECOND',
  'MNEMO_COST_API_CALLS_PER_1000', 'MNEMO_ANALYTICS', 'MNEMO_SEARCH_THREADS', 'MNEMO_TRUST_PROXY',
  'MNEMO_MCP_ALLOWED_ORIGINS',
] as const;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number (got "${raw}")`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${value})`);
  return value;
}

/** A non-negative decimal (a price). */
function price(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigError(name, `must be a non-negative decimal number (got "${raw}")`);
  return Number(raw.trim());
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
  return value;
}

function httpUrl(env: Env, name: string): string {
  const raw = env[name];
  if (!raw) throw new ConfigError(name, 'is required when MNEMO_EMBEDDINGS=openai');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http(s) URL (got "${raw}")`);
  }
  return raw;
}

/** A URL with one of `schemes` (e.g. `redis:`), or null when the variable is unset. */
function serviceUrl(env: Env, name: string, schemes: readonly string[]): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const wanted = `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL (got "${redactPassword(raw)}")`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, wanted);
  }
  if (!schemes.includes(url.protocol)) throw new ConfigError(name, wanted);
  return raw;
}

/**
 * `MNEMO_DASHBOARD_URL`, or the server's own address + `/dashboard` (an IPv6 host in brackets), without a trailing
 * slash. A URL given must be http(s) with no query or fragment: approval paths are appended to it.
 */
function dashboardUrl(env: Env, host: string, port: number): string {
  const raw = env.MNEMO_DASHBOARD_URL?.trim();
  if (!raw) return `http://${host.includes(':') ? `[${host}]` : host}:${port}/dashboard`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('MNEMO_DASHBOARD_URL', `must be an http(s) URL (got "${redactPassword(raw)}")`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError('MNEMO_DASHBOARD_URL', `must be an http(s) URL without credentials, query or fragment (got "${redactPassword(raw)}")`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * A hostname as an Origin allowlist holds it (no scheme, no port; IPv6 in brackets), or `<scheme>://*` for every
 * origin of a browser-extension scheme.
 */
const ORIGIN_HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\]|[a-z][a-z0-9+.-]*:\/\/\*)$/;

function originHostnames(env: Env, name: string): readonly string[] | '*' {
  const raw = env[name]?.trim();
  if (!raw) return [];
  if (raw === '*') return '*';
  const items = raw.split(',').map((item) => item.trim().toLowerCase()).filter((item) => item !== '');
  for (const item of items) {
    if (!ORIGIN_HOSTNAME.test(item) || item === 'http://*' || item === 'https://*') {
      throw new ConfigError(name, `must be "*" or comma-separated hostnames without scheme or port, e.g. "app.example.com,[::1]" (got "${item}")`);
    }
  }
  return items;
}

/** `MNEMO_METRICS` and `MNEMO_METRICS_TOKEN`; the token is never printed. */
function metricsAccess(env: Env): MetricsAccess {
  const mode = oneOf(env, 'MNEMO_METRICS', ['off', 'loopback', 'token'] as const, 'loopback');
  const token = env.MNEMO_METRICS_TOKEN?.trim() ?? '';
  if (mode !== 'token') {
    // A token that guards nothing would let an operator believe the endpoint is protected by it.
    if (token) throw new ConfigError('MNEMO_METRICS_TOKEN', `is only used with MNEMO_METRICS=token (MNEMO_METRICS is ${mode})`);
    return { mode };
  }
  if (token.length < METRICS_TOKEN_MIN_LENGTH) {
    throw new ConfigError('MNEMO_METRICS_TOKEN', `must be at least ${METRICS_TOKEN_MIN_LENGTH} characters when MNEMO_METRICS=token (got ${token.length})`);
  }
  if (/\s/.test(token)) throw new ConfigError('MNEMO_METRICS_TOKEN', 'must not contain whitespace');
  return { mode, token };
}

/** A start-up error must not print a password given in a URL. */
export const redactPassword = (raw: string): string => raw.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');

function cidrList(env: Env, name: string): string[] {
  try {
    return parseAllowCidrs(env[name] ?? '');
  } catch (err) {
    throw new ConfigError(name, `must be a comma-separated list of CIDRs (${(err as Error).message})`);
  }
}

const MIB = 1024 * 1024;

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST?.trim() || '127.0.0.1';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(env.MNEMO_DATA_DIR?.trim() || './data');

  const kind = oneOf(env, 'MNEMO_EMBEDDINGS', ['local', 'hashing', 'openai'] as const, 'local');
  let embeddings: Config['embeddings'];
  if (kind === 'openai') {
    const model = env.MNEMO_EMBEDDINGS_MODEL?.trim();
    if (!model) throw new ConfigError('MNEMO_EMBEDDINGS_MODEL', 'is required when MNEMO_EMBEDDINGS=openai');
    const dims = env.MNEMO_EMBEDDINGS_DIMENSIONS ? int(env, 'MNEMO_EMBEDDINGS_DIMENSIONS', 1536, 1, 1536) : undefined;
    embeddings = { kind, url: httpUrl(env, 'MNEMO_EMBEDDINGS_URL'), model, apiKey: env.MNEMO_EMBEDDINGS_API_KEY || undefined, dimensions: dims };
  } else if (kind === 'hashing') {
    embeddings = { kind, dimensions: int(env, 'MNEMO_EMBEDDINGS_DIMENSIONS', 512, 8, 1024) };
  } else {
    const workers = env.MNEMO_EMBEDDING_WORKERS?.trim() ? int(env, 'MNEMO_EMBEDDING_WORKERS', 1, 1, 64) : undefined;
    embeddings = { kind, workers };
  }

  const maxContentBytes = int(env, 'MNEMO_MAX_CONTENT_BYTES', MIB, 1, 256 * MIB);
  const bodyLimitBytes = int(env, 'MNEMO_BODY_LIMIT_BYTES', Math.max(4 * MIB, 2 * maxContentBytes + 64 * 1024), 1024, 1024 * MIB);
  if (bodyLimitBytes < maxContentBytes) {
    throw new ConfigError('MNEMO_BODY_LIMIT_BYTES', `must be at least MNEMO_MAX_CONTENT_BYTES (${maxContentBytes})`);
  }
  const enterpriseRaw = env.MNEMO_ENTERPRISE_RATE_LIMIT;
  return {
    host,
    port,
    dataDir,
    databaseFile: resolve(dataDir, 'mnemo.db'),
    sqliteSynchronous: oneOf(env, 'MNEMO_SQLITE_SYNCHRONOUS', SQLITE_SYNCHRONOUS, 'full'),
    embeddings,
    maxContentBytes,
    bodyLimitBytes,
    bodyDrainBytes: int(env, 'MNEMO_BODY_DRAIN_BYTES', 64 * MIB, 0, 1024 * MIB),
    maxEmbedChars: int(env, 'MNEMO_MAX_EMBED_CHARS', 4000, 16, 1_000_000),
    logLevel: oneOf(env, 'MNEMO_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    enterpriseRequestsPerMinute: enterpriseRaw ? int(env, 'MNEMO_ENTERPRISE_RATE_LIMIT', 0, 1, 1_000_000_000) : null,
    shutdownTimeoutMs: int(env, 'MNEMO_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    searchTimeoutMs: int(env, 'MNEMO_SEARCH_TIMEOUT_MS', 10_000, 1, 600_000),
    maxConcurrentSearches: int(env, 'MNEMO_MAX_CONCURRENT_SEARCHES', 16, 1, 10_000),
    maxQueuedSearches: int(env, 'MNEMO_MAX_QUEUED_SEARCHES', 64, 0, 100_000),
    maxEventLoopDelayMs: int(env, 'MNEMO_MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 600_000),
    webhookAllowCidrs: cidrList(env, 'MNEMO_WEBHOOK_ALLOW_CIDRS'),
    webhookTimeoutMs: int(env, 'MNEMO_WEBHOOK_TIMEOUT_MS', 5000, 100, 60_000),
    eventRetentionHours: int(env, 'MNEMO_EVENT_RETENTION_HOURS', 168, 1, 24 * 366),
    maxStreamsPerTenant: int(env, 'MNEMO_MAX_STREAMS_PER_TENANT', 50, 1, 1_000_000),
    maxStreams: int(env, 'MNEMO_MAX_STREAMS', 1000, 1, 1_000_000),
    redisUrl: serviceUrl(env, 'MNEMO_REDIS_URL', ['redis:', 'rediss:']),
    databaseUrl: serviceUrl(env, 'MNEMO_DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: int(env, 'MNEMO_DATABASE_POOL_SIZE', 10, 1, 1000),
    masterKey: env.MNEMO_MASTER_KEY?.trim() ? env.MNEMO_MASTER_KEY.trim() : null,
    dashboardUrl: dashboardUrl(env, host, port),
    metrics: metricsAccess(env),
    analytics: oneOf(env, 'MNEMO_ANALYTICS', ['on', 'off'] as const, 'on') === 'on',
    searchThreads: int(env, 'MNEMO_SEARCH_THREADS', Math.min(16, availableParallelism()), 0, 16),
    trustProxy: oneOf(env, 'MNEMO_TRUST_PROXY', ['on', 'off'] as const, 'off') === 'on',
    mcpAllowedOrigins: originHostnames(env, 'MNEMO_MCP_ALLOWED_ORIGINS'),
    costPrices: {
      storagePerGbMonth: price(env, 'MNEMO_COST_STORAGE_GB_MONTH', EXAMPLE_UNIT_PRICES.storagePerGbMonth),
      computePerSecond: price(env, 'MNEMO_COST_COMPUTE_SECOND', EXAMPLE_UNIT_PRICES.computePerSecond),
      apiCallsPer1000: price(env, 'MNEMO_COST_API_CALLS_PER_1000', EXAMPLE_UNIT_PRICES.apiCallsPer1000),
    },
  };
}
