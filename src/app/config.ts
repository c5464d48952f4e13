import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { SQLITE_SYNCHRONOUS, type SqliteSynchronous } from '../adapters/storage/sqlite/sqlite.database.ts';
import { parseAllowCidrs } from '../core/webhooks/address-policy.ts';
import { EXAMPLE_UNIT_PRICES, type UnitPrices } from '../core/analytics/cost-model.ts';
import { DEFAULT_INGESTION_LIMITS, type IngestionLimits } from '../core/ingestion/ingestion.rules.ts';
import { DEFAULT_ACCESS_TTL_SECONDS } from '../core/oauth/oauth.rules.ts';
import { defaultDataDir } from './default-data-dir.ts';

/**
 * The whole configuration, parsed once at start from the environment. This is the only module that reads
 * process.env. A bad value stops the start with a message naming the variable.
 */
export type EmbeddingsKind = 'local' | 'hashing' | 'openai';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** What the variables of CONFIG_TABLE set; each row there says what its variable means. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** The SQLite file inside dataDir. */
  databaseFile: string;
  sqliteSynchronous: SqliteSynchronous;
  embeddings:
    /** `workers` undefined: the adapter's default. */
    | { kind: 'local'; workers: number | undefined }
    | { kind: 'hashing'; dimensions: number }
    /** `dimensions` undefined: the model's own. */
    | { kind: 'openai'; url: string; model: string; apiKey: string | undefined; dimensions: number | undefined };
  maxContentBytes: number;
  bodyLimitBytes: number;
  bodyDrainBytes: number;
  maxEmbedChars: number;
  logLevel: LogLevel;
  /** null: unlimited (the spec's "custom"). */
  enterpriseRequestsPerMinute: number | null;
  shutdownTimeoutMs: number;
  searchTimeoutMs: number;
  maxConcurrentSearches: number;
  maxQueuedSearches: number;
  /** The reranker of hybrid search; null: none (MNEMO_RERANK_URL unset). `model` empty: none sent. */
  rerank: { url: string; model: string; apiKey: string | undefined; topN: number; timeoutMs: number } | null;
  /** 0: load shedding off. */
  maxEventLoopDelayMs: number;
  /** Normalised CIDRs; empty: none. */
  webhookAllowCidrs: string[];
  webhookTimeoutMs: number;
  eventRetentionHours: number;
  maxStreamsPerTenant: number;
  maxStreams: number;
  /** null: what nodes would share through Redis is kept in this process. */
  redisUrl: string | null;
  /** null: SQLite in `dataDir`. */
  databaseUrl: string | null;
  databasePoolSize: number;
  /** false: PostgreSQL statements go unprepared (a pooler that cannot keep prepared statements). */
  databasePreparedStatements: boolean;
  /** null: the data directory's `master.key` (app/keyring.factory.ts). Checked when the keyring is loaded, never printed. */
  masterKey: string | null;
  /** Without a trailing slash. */
  dashboardUrl: string;
  /** Mnemo's public origin (OAuth issuer; the MCP resource is `<publicUrl>/mcp`), without a trailing slash. */
  publicUrl: string;
  /** Lifetime of an OAuth access token, in seconds. */
  oauthAccessTtlSeconds: number;
  metrics: MetricsAccess;
  costPrices: UnitPrices;
  analytics: boolean;
  /** 0: the vector scan runs on the event loop. */
  searchThreads: number;
  trustProxy: boolean;
  /** `*`: the Origin check is off. */
  mcpAllowedOrigins: readonly string[] | '*';
  /** The OpenAI-compatible chat model ingestion's `extract` uses; null: none (extract is refused). */
  llm: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | null;
  ingestion: IngestionLimits;
  /** How long a node's claim on an ingestion job lasts (renewed while it runs): how long a dead node's job waits. */
  ingestionLeaseMs: number;
  /** How long a completed or failed ingestion job is kept (its conversation and proposals included). */
  ingestionRetentionHours: number;
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

/**
 * One environment variable. CONFIG_TABLE is the only list of them: loadConfig, `mnemo serve --help` and
 * docs/configuration.md (`npm run docs:config`) are made from it.
 */
export interface ConfigVariable {
  name: string;
  /**
   * The fields a set (not blank) value gives the configuration, or throws BadValue. `above` holds what the variables
   * above it in the table read. Absent for a variable that a command reads and the server does not.
   */
  parse?: (raw: string, above: Readonly<Config>) => Partial<Config>;
  /**
   * When it is unset or blank: a value parsed as if it had been set, or the fields computed from the variables above
   * (and from the environment: the per-user data directory); absent: the fields keep what the variables above gave them.
   */
  default?: string | ((above: Readonly<Config>, env: Env) => Partial<Config>);
  /** The default as people read it, when it is not a plain value (computed, or none: shown as —). */
  shown?: string;
  /** What it means: one Markdown table cell. */
  doc: string;
}

/** A bad value; loadConfig names the variable it was read from. */
class BadValue extends Error {}

/** `field('port', …)`: a variable that sets one field. */
const field = <K extends keyof Config>(key: K, parse: (raw: string) => Config[K]) =>
  (raw: string): Partial<Config> => ({ [key]: parse(raw) }) as Partial<Config>;

const text = (raw: string): string => raw.trim();

const wholeNumber = (min: number, max: number) => (raw: string): number => {
  if (!/^\d+$/.test(raw.trim())) throw new BadValue(`must be a whole number (got "${raw}")`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new BadValue(`must be between ${min} and ${max} (got ${value})`);
  return value;
};

/** A non-negative decimal (a price). */
const decimal = (raw: string): number => {
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new BadValue(`must be a non-negative decimal number (got "${raw}")`);
  return Number(raw.trim());
};

const oneOf = <T extends string>(allowed: readonly T[]) => (raw: string): T => {
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) throw new BadValue(`must be one of ${allowed.join(', ')} (got "${raw}")`);
  return value;
};

const onOff = (raw: string): boolean => oneOf(['on', 'off'] as const)(raw) === 'on';

function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadValue(`must be an http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`must be an http(s) URL (got "${raw}")`);
  return raw;
}

/** A URL with one of `schemes` (e.g. `redis:`). */
const serviceUrl = (schemes: readonly string[]) => (value: string): string => {
  const raw = value.trim();
  const wanted = `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL (got "${redactPassword(raw)}")`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadValue(wanted);
  }
  if (!schemes.includes(url.protocol)) throw new BadValue(wanted);
  return raw;
};

/** An http(s) origin: scheme, host and port only. */
function publicOrigin(value: string): string {
  const url = new URL(dashboardUrl(value));
  if (url.pathname !== '/') throw new BadValue(`must be an origin without a path (got "${value.trim()}")`);
  return url.origin;
}

/** An http(s) URL with no query or fragment (approval paths are appended to it), without a trailing slash. */
function dashboardUrl(value: string): string {
  const raw = value.trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadValue(`must be an http(s) URL (got "${redactPassword(raw)}")`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new BadValue(`must be an http(s) URL without credentials, query or fragment (got "${redactPassword(raw)}")`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * A hostname as an Origin allowlist holds it (no scheme, no port; IPv6 in brackets), or `<scheme>://*` for every
 * origin of a browser-extension scheme.
 */
const ORIGIN_HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\]|[a-z][a-z0-9+.-]*:\/\/\*)$/;

function originHostnames(value: string): readonly string[] | '*' {
  const raw = value.trim();
  if (raw === '*') return '*';
  const items = raw.split(',').map((item) => item.trim().toLowerCase()).filter((item) => item !== '');
  for (const item of items) {
    if (!ORIGIN_HOSTNAME.test(item) || item === 'http://*' || item === 'https://*') {
      throw new BadValue(`must be "*" or comma-separated hostnames without scheme or port, e.g. "app.example.com,[::1]" (got "${item}")`);
    }
  }
  return items;
}

function cidrList(raw: string): string[] {
  try {
    return parseAllowCidrs(raw);
  } catch (err) {
    throw new BadValue(`must be a comma-separated list of CIDRs (${(err as Error).message})`);
  }
}

/** `MNEMO_METRICS_TOKEN` as `MNEMO_METRICS` (read above it) wants it; the token is never printed. */
function metricsToken(token: string, { metrics }: Readonly<Config>): Partial<Config> {
  if (metrics.mode !== 'token') {
    // A token that guards nothing would let an operator believe the endpoint is protected by it.
    if (token) throw new BadValue(`is only used with MNEMO_METRICS=token (MNEMO_METRICS is ${metrics.mode})`);
    return {};
  }
  if (token.length < METRICS_TOKEN_MIN_LENGTH) {
    throw new BadValue(`must be at least ${METRICS_TOKEN_MIN_LENGTH} characters when MNEMO_METRICS=token (got ${token.length})`);
  }
  if (/\s/.test(token)) throw new BadValue('must not contain whitespace');
  return { metrics: { mode: 'token', token } };
}

const dataDirFields = (dir: string): Partial<Config> => {
  const dataDir = resolve(dir.trim());
  return { dataDir, databaseFile: resolve(dataDir, 'mnemo.db') };
};

/** A start-up error must not print a password given in a URL. */
export const redactPassword = (raw: string): string => raw.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');

const MIB = 1024 * 1024;
const HASHING_DIMENSIONS = 512;

/** The embeddings of a kind before the variables below MNEMO_EMBEDDINGS fill them in (openai's url and model are required). */
const embeddingsOf = (kind: EmbeddingsKind): Config['embeddings'] => (kind === 'openai'
  ? { kind, url: '', model: '', apiKey: undefined, dimensions: undefined }
  : kind === 'hashing' ? { kind, dimensions: HASHING_DIMENSIONS } : { kind, workers: undefined });

const requiredForOpenai = ({ embeddings }: Readonly<Config>): Partial<Config> => {
  if (embeddings.kind === 'openai') throw new BadValue('is required when MNEMO_EMBEDDINGS=openai');
  return {};
};

/** One of the G7 unit prices, into the prices read above it. */
const price = (key: keyof UnitPrices) => (raw: string, { costPrices }: Readonly<Config>): Partial<Config> =>
  ({ costPrices: { ...costPrices, [key]: decimal(raw) } });

/** In the order of docs/configuration.md; a variable's parse sees the ones above it. */
export const CONFIG_TABLE: readonly ConfigVariable[] = [
  { name: 'HOST', parse: field('host', text), default: '127.0.0.1', doc: 'address to listen on' },
  {
    name: 'PORT', parse: field('port', wholeNumber(0, 65535)), default: '8080',
    doc: 'port to listen on (`0` picks a free one; the `listening on` line tells which)',
  },
  {
    name: 'MNEMO_DATA_DIR',
    default: (_above, env) => dataDirFields(defaultDataDir(env)),
    shown: '`./data` in a checkout; per-user when installed',
    parse: (raw) => dataDirFields(raw),
    doc: 'where the SQLite file (`mnemo.db`) and `master.key` live. The installed package\'s per-user default: '
      + '`$XDG_DATA_HOME/mnemo` else `~/.local/share/mnemo` (Linux), `~/Library/Application Support/mnemo` (macOS), '
      + '`%LOCALAPPDATA%\\mnemo` (Windows). A checkout is told apart by `src/` and `tsconfig.json` beside the code '
      + '(docs/cli.md, "Installing the package")',
  },
  {
    name: 'MNEMO_EMBEDDINGS', default: 'local',
    parse: (raw) => ({ embeddings: embeddingsOf(oneOf(['local', 'hashing', 'openai'] as const)(raw)) }),
    doc: '`local` (bundled Universal Sentence Encoder lite, 512 dims, in worker threads), `hashing` (deterministic'
      + ' feature hashing; for tests), `openai` (any OpenAI-compatible `/v1/embeddings` server)',
  },
  {
    name: 'MNEMO_EMBEDDINGS_URL', default: requiredForOpenai,
    parse: (raw, { embeddings: e }) => (e.kind === 'openai' ? { embeddings: { ...e, url: httpUrl(raw) } } : {}),
    doc: 'for `openai`: base URL such as `https://api.openai.com/v1` or `http://localhost:11434/v1`',
  },
  {
    name: 'MNEMO_EMBEDDINGS_MODEL', default: requiredForOpenai,
    parse: (raw, { embeddings: e }) => (e.kind === 'openai' ? { embeddings: { ...e, model: raw.trim() } } : {}),
    doc: 'for `openai`: model name',
  },
  {
    name: 'MNEMO_EMBEDDINGS_API_KEY',
    parse: (raw, { embeddings: e }) => (e.kind === 'openai' ? { embeddings: { ...e, apiKey: raw } } : {}),
    doc: 'for `openai`: sent as `Authorization: Bearer`',
  },
  {
    name: 'MNEMO_EMBEDDING_WORKERS', shown: 'one per CPU, at most 4',
    parse: (raw, { embeddings: e }) => (e.kind === 'local' ? { embeddings: { ...e, workers: wholeNumber(1, 64)(raw) } } : {}),
    doc: 'for `local`: model worker threads (each holds its own copy of the model); concurrent embeddings are '
      + 'spread over them, so ingest uses every core, and each worker is handed its next text while it embeds '
      + 'one, so it never waits for a busy event loop',
  },
  {
    name: 'MNEMO_EMBEDDINGS_DIMENSIONS', shown: 'model\'s own',
    parse: (raw, { embeddings: e }) => (e.kind === 'openai' ? { embeddings: { ...e, dimensions: wholeNumber(1, 1536)(raw) } }
      : e.kind === 'hashing' ? { embeddings: { ...e, dimensions: wholeNumber(8, 1024)(raw) } } : {}),
    doc: `for \`openai\`: requested width (≤ 1536); for \`hashing\`: width (default ${HASHING_DIMENSIONS})`,
  },
  {
    name: 'MNEMO_MAX_CONTENT_BYTES', parse: field('maxContentBytes', wholeNumber(1, 256 * MIB)), default: String(MIB),
    doc: 'largest memory content, in UTF-8 bytes (413 `CONTENT_TOO_LARGE` above)',
  },
  {
    name: 'MNEMO_BODY_LIMIT_BYTES', shown: 'max(4 MiB, 2 × content + 64 KiB)',
    default: ({ maxContentBytes }) => ({ bodyLimitBytes: Math.max(4 * MIB, 2 * maxContentBytes + 64 * 1024) }),
    parse: (raw, { maxContentBytes }) => {
      const bodyLimitBytes = wholeNumber(1024, 1024 * MIB)(raw);
      if (bodyLimitBytes < maxContentBytes) throw new BadValue(`must be at least MNEMO_MAX_CONTENT_BYTES (${maxContentBytes})`);
      return { bodyLimitBytes };
    },
    doc: 'largest request body (413 above)',
  },
  {
    name: 'MNEMO_BODY_DRAIN_BYTES', parse: field('bodyDrainBytes', wholeNumber(0, 1024 * MIB)), default: String(64 * MIB),
    doc: 'an answer given before the body was read (413 over the limit, 401, 415) waits until the client has sent '
      + 'up to this many more bytes (and at most 10 s), so that clients which read only after sending (Node\'s '
      + '`fetch`) get it; a larger declared body is answered at once and the connection closed. `0`: never wait. '
      + 'The default is 64 MiB',
  },
  {
    name: 'MNEMO_MAX_EMBED_CHARS', parse: field('maxEmbedChars', wholeNumber(16, 1_000_000)), default: '4000',
    doc: 'characters of title + content given to the embedding model',
  },
  {
    name: 'MNEMO_LOG_LEVEL', default: 'info',
    parse: field('logLevel', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const)),
    doc: '`fatal` `error` `warn` `info` `debug` `trace` `silent`; logs are JSON lines (pino) on stdout. Request '
      + 'lines carry method, URL, host and peer address, never headers; credential-like query parameters '
      + '(`access_token` however it is percent-encoded or cased, `api_key`, `token`, …) and anything shaped like '
      + 'a key are logged as `[redacted]`',
  },
  {
    name: 'MNEMO_ENTERPRISE_RATE_LIMIT', shown: 'unlimited',
    parse: field('enterpriseRequestsPerMinute', wholeNumber(1, 1_000_000_000)), default: () => ({ enterpriseRequestsPerMinute: null }),
    doc: 'requests per minute for enterprise keys (the spec\'s "custom")',
  },
  {
    name: 'MNEMO_SHUTDOWN_TIMEOUT_MS', parse: field('shutdownTimeoutMs', wholeNumber(0, 600_000)), default: '10000',
    doc: 'how long a graceful shutdown may take before the process exits anyway',
  },
  {
    name: 'MNEMO_SEARCH_TIMEOUT_MS', parse: field('searchTimeoutMs', wholeNumber(1, 600_000)), default: '10000',
    doc: 'a search not answered this long after its request arrived (time waiting for a search slot included) '
      + 'answers its surface\'s timeout error (G1, G3, G4: 408 `SEARCH_TIMEOUT`)',
  },
  {
    name: 'MNEMO_MAX_CONCURRENT_SEARCHES', parse: field('maxConcurrentSearches', wholeNumber(1, 10_000)), default: '16',
    doc: 'searches (every surface, batch items included) running at once; more wait in line',
  },
  {
    name: 'MNEMO_MAX_QUEUED_SEARCHES', parse: field('maxQueuedSearches', wholeNumber(0, 100_000)), default: '64',
    doc: 'searches waiting for a slot; past it a search is refused at once: 503 `SERVICE_UNAVAILABLE` with '
      + '`Retry-After: 1`, in its surface\'s envelope',
  },
  {
    name: 'MNEMO_RERANK_URL', default: () => ({ rerank: null }),
    parse: (raw) => ({ rerank: { url: httpUrl(raw.trim()), model: '', apiKey: undefined, topN: 20, timeoutMs: 2000 } }),
    doc: 'a reranker (cross-encoder) that reorders hybrid search\'s best candidates on every surface (docs/api.md, G3 '
      + '"/hybrid", *Reranking*): the base URL of a `/rerank` endpoint, such as `https://api.cohere.com/v2`, '
      + '`https://api.jina.ai/v1`, `http://localhost:8080` (text-embeddings-inference) or `http://localhost:8080/v1` '
      + '(llama.cpp\'s `llama-server --reranking`); `/rerank` is appended unless the URL ends in it. Unset: no reranking',
  },
  {
    name: 'MNEMO_RERANK_MODEL',
    parse: (raw, { rerank }) => (rerank ? { rerank: { ...rerank, model: raw.trim() } } : {}),
    doc: 'with `MNEMO_RERANK_URL`: the model name sent (Cohere and Jina need one, e.g. `rerank-v3.5`; TEI and llama.cpp '
      + 'serve the model they loaded)',
  },
  {
    name: 'MNEMO_RERANK_API_KEY',
    parse: (raw, { rerank }) => (rerank ? { rerank: { ...rerank, apiKey: raw } } : {}),
    doc: 'with `MNEMO_RERANK_URL`: sent as `Authorization: Bearer`',
  },
  {
    name: 'MNEMO_RERANK_TOP_N', default: '20',
    parse: (raw, { rerank }) => (rerank ? { rerank: { ...rerank, topN: wholeNumber(1, 1000)(raw) } } : {}),
    doc: 'with `MNEMO_RERANK_URL`: how many of hybrid\'s best candidates (those at or above its relevance floor) the '
      + 'reranker scores, or the page asked for (`topK`, `limit`) when that is larger',
  },
  {
    name: 'MNEMO_RERANK_TIMEOUT_MS', default: '2000',
    parse: (raw, { rerank, searchTimeoutMs }) => {
      if (!rerank) return {};
      const timeoutMs = wholeNumber(1, 600_000)(raw);
      // A reranker waited for until the search's own deadline would turn its slowness into TIMEOUT errors.
      if (timeoutMs >= searchTimeoutMs) throw new BadValue(`must be below MNEMO_SEARCH_TIMEOUT_MS (${searchTimeoutMs})`);
      return { rerank: { ...rerank, timeoutMs } };
    },
    doc: 'with `MNEMO_RERANK_URL`: a reranker that has not answered after this long is given up and the search answers '
      + 'in hybrid\'s own order; below `MNEMO_SEARCH_TIMEOUT_MS`',
  },
  {
    name: 'MNEMO_MAX_EVENT_LOOP_DELAY_MS', parse: field('maxEventLoopDelayMs', wholeNumber(0, 600_000)), default: '1000',
    doc: 'load shedding: while the mean event-loop delay (measured each second) is above this, every request '
      + 'except `/health`, `/api/v1/health` and `/metrics` is answered at once with 503 `SERVICE_UNAVAILABLE` and '
      + '`Retry-After: 2`, in its surface\'s envelope; `0` turns it off',
  },
  {
    name: 'MNEMO_WEBHOOK_ALLOW_CIDRS', parse: field('webhookAllowCidrs', cidrList), default: () => ({ webhookAllowCidrs: [] }),
    doc: 'comma-separated CIDRs (e.g. `127.0.0.0/8,fd00::/8`) that webhook URLs may point at although they are '
      + 'private, loopback or link-local; everything else non-public is refused at registration (IP literals, '
      + '`localhost`) and at delivery',
  },
  {
    name: 'MNEMO_WEBHOOK_TIMEOUT_MS', parse: field('webhookTimeoutMs', wholeNumber(100, 60_000)), default: '5000',
    doc: 'how long one webhook delivery attempt (DNS, connect, TLS, answer) may take before it counts as failed '
      + 'and is retried; a node that dies mid-attempt leaves it to another after 3 × this + 2 s',
  },
  {
    name: 'MNEMO_SQLITE_SYNCHRONOUS', parse: field('sqliteSynchronous', oneOf(SQLITE_SYNCHRONOUS)), default: 'full',
    doc: 'when SQLite makes a commit durable (WAL mode). `full`: the WAL is fsynced before each write is '
      + 'acknowledged, so an acknowledged write survives power loss. `normal`: fsync only at checkpoints; several '
      + 'times faster per write (see BENCHMARKS.md, `npm run bench:durability`) and still safe against a crash '
      + 'of the process, but the writes since the last checkpoint can vanish on power loss or an OS crash '
      + 'although clients got their 2xx. The server and `mnemo keys` read the same setting',
  },
  {
    name: 'MNEMO_MAX_STREAMS_PER_TENANT', parse: field('maxStreamsPerTenant', wholeNumber(1, 1_000_000)), default: '50',
    doc: 'concurrent stream connections (G8 SSE, G4 live search, G7 analytics socket) of one tenant, all its keys '
      + 'together; past it a stream is refused with `RATE_LIMITED` (besides the spec\'s 5 per key)',
  },
  {
    name: 'MNEMO_MAX_STREAMS', parse: field('maxStreams', wholeNumber(1, 1_000_000)), default: '1000',
    doc: 'concurrent stream connections of the whole process, every tenant; refused the same way',
  },
  {
    name: 'MNEMO_EVENT_RETENTION_HOURS', parse: field('eventRetentionHours', wholeNumber(1, 24 * 366)), default: '168',
    doc: 'how long events are kept (G8 stream resume with `Last-Event-ID`, webhook history), in hours; older '
      + 'events are pruned hourly unless a webhook delivery still waits for them',
  },
  {
    name: 'MNEMO_DATABASE_URL', parse: field('databaseUrl', serviceUrl(['postgres:', 'postgresql:'])), default: () => ({ databaseUrl: null }),
    doc: '`postgres://` or `postgresql://` URL of a PostgreSQL (≥ 14, with pgvector ≥ 0.8) to use instead of the '
      + 'SQLite file; migrated at start. The CLI follows the same variable. Several nodes on one database and one '
      + 'Redis: docs/deploy.md',
  },
  {
    name: 'MNEMO_DATABASE_POOL_SIZE', parse: field('databasePoolSize', wholeNumber(1, 1000)), default: '10',
    doc: 'connections this process opens to PostgreSQL',
  },
  {
    name: 'MNEMO_DATABASE_PREPARED_STATEMENTS', parse: field('databasePreparedStatements', onOff), default: 'on',
    doc: '`off` sends every PostgreSQL statement unprepared: for a pooler that cannot keep prepared statements '
      + '(PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`). A server that loses one '
      + 'turns them off by itself with a warning in the log; docs/deploy.md',
  },
  {
    name: 'MNEMO_ANALYTICS', parse: field('analytics', onOff), default: 'on',
    doc: '`off` stops measuring requests for G7 (`GET /api/v1/analytics` then reports no request figures); the '
      + 'cost of measuring is in BENCHMARKS.md',
  },
  {
    name: 'MNEMO_SEARCH_THREADS', shown: 'the cores available (at most 16)',
    parse: field('searchThreads', wholeNumber(0, 16)), default: () => ({ searchThreads: Math.min(16, availableParallelism()) }),
    doc: 'worker threads that run SQLite\'s exact vector scan off the event loop, over shared memory (0–16; `0` '
      + 'scans on the event loop). Searches are split across them and concurrent searches share them; each also '
      + 're-ranks its part from the store file on its own read-only connection. It also sets how many threads '
      + 'load the vectors at start: one below 2, two from 2. On Linux these threads run at nice +10 beside the '
      + 'event loop, so requests (`/health` too) get a core first; see docs/architecture.md, "The vector scan"',
  },
  {
    name: 'MNEMO_TRUST_PROXY', parse: field('trustProxy', onOff), default: 'off',
    doc: '`on` trusts `X-Forwarded-For` / `X-Forwarded-Proto` from the reverse proxy in front: request addresses '
      + '(audit rows) are the client\'s, and the dashboard\'s session cookie is `Secure` when the proxy terminated '
      + 'TLS. Leave off when clients reach the server directly',
  },
  {
    name: 'MNEMO_MCP_ALLOWED_ORIGINS', parse: field('mcpAllowedOrigins', originHostnames), default: () => ({ mcpAllowedOrigins: [] }),
    doc: 'Extra hostnames (comma-separated, no scheme or port; `moz-extension://*` style for extension schemes) '
      + 'whose browser pages may call `/mcp`. Loopback names and the host of `MNEMO_DASHBOARD_URL` are always '
      + 'allowed; a request with another `Origin` is refused with 403 before its key is read (DNS-rebinding '
      + 'protection, as the MCP transport asks). Requests without `Origin` (every non-browser client) pass. `*` '
      + 'turns the check off',
  },
  {
    name: 'MNEMO_MASTER_KEY', parse: field('masterKey', text), default: () => ({ masterKey: null }),
    doc: 'the master key sealing secrets (G11) and webhook signing secrets (G9, G10, G11): 32 bytes as 64 hex '
      + 'digits or base64 (`openssl rand -base64 32`); several, comma-separated, during a rotation (the first '
      + 'seals new values; `mnemo keys rotate-master`, docs/deploy.md). Unset: `master.key` in `MNEMO_DATA_DIR`, '
      + 'created with mode 0600 on first start (a file others may read is refused). Several nodes on one database '
      + 'need the same key. A missing, malformed or wrong key stops the start with a message saying so',
  },
  {
    name: 'MNEMO_DASHBOARD_URL', shown: '`http://HOST:PORT/dashboard`', parse: field('dashboardUrl', dashboardUrl),
    default: ({ host, port }) => ({ dashboardUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}/dashboard` }),
    doc: 'where people answer G11 MCP approvals: an approval\'s `approvalUrl` is this URL + '
      + '`/approvals/<approvalId>`. An http(s) URL without credentials, query or fragment (a trailing `/` is '
      + 'dropped); set it when clients reach the server under another address (a load balancer, TLS in front)',
  },
  {
    name: 'MNEMO_PUBLIC_URL', shown: 'the origin of `MNEMO_DASHBOARD_URL`', parse: field('publicUrl', publicOrigin),
    default: ({ dashboardUrl: d }) => ({ publicUrl: new URL(d).origin }),
    doc: 'the origin remote MCP clients reach Mnemo at (`https://mnemo.example.com`): the OAuth issuer, and the '
      + 'resource `<MNEMO_PUBLIC_URL>/mcp` that access tokens are for (docs/oauth.md). An http(s) origin without '
      + 'path, query or credentials; hosted clients need https',
  },
  {
    name: 'MNEMO_OAUTH_ACCESS_TTL_SECONDS', parse: field('oauthAccessTtlSeconds', wholeNumber(60, 86_400)), default: String(DEFAULT_ACCESS_TTL_SECONDS),
    doc: 'how long an OAuth access token works, in seconds (60–86400); clients then use their refresh token (docs/oauth.md)',
  },
  {
    // Read by `mnemo mcp` (app/mcp.command.ts), listed here so that operators find it with the others.
    name: 'MNEMO_API_KEY',
    doc: '`mnemo mcp` only: the API key the stdio MCP server acts for (an environment variable, so that it never '
      + 'shows in `ps`); the server itself does not read it',
  },
  {
    name: 'MNEMO_COST_STORAGE_GB_MONTH', parse: price('storagePerGbMonth'), default: String(EXAMPLE_UNIT_PRICES.storagePerGbMonth),
    doc: 'G7 cost model: price of 1 GB (2^30 bytes of memory title + content) kept for 30 days, prorated over the '
      + 'period. The defaults of the four `MNEMO_COST_*` prices are placeholders to show the arithmetic, not '
      + 'anyone\'s real prices: set your own',
  },
  {
    name: 'MNEMO_COST_COMPUTE_SECOND', parse: price('computePerSecond'), default: String(EXAMPLE_UNIT_PRICES.computePerSecond),
    doc: 'G7 cost model: price of one second of request time (the sum of measured latencies); the default is an example',
  },
  {
    name: 'MNEMO_COST_API_CALLS_PER_1000', parse: price('apiCallsPer1000'), default: String(EXAMPLE_UNIT_PRICES.apiCallsPer1000),
    doc: 'G7 cost model: price of 1,000 answered requests; the default is an example',
  },
  {
    name: 'MNEMO_COST_LLM_1M_TOKENS', parse: price('llmPer1MTokens'), default: String(EXAMPLE_UNIT_PRICES.llmPer1MTokens),
    doc: 'G7 cost model: price of one million tokens (prompt and completion together) of the chat model that '
      + 'ingestion\'s `extract` mode calls, counted when a job finishes (the `llm` line); the default is an example',
  },
  {
    name: 'MNEMO_LLM_URL', default: () => ({ llm: null }),
    parse: (raw) => ({ llm: { url: httpUrl(raw.trim()), model: '', apiKey: undefined, timeoutMs: 60_000 } }),
    doc: 'an OpenAI-compatible chat-completions server for ingestion\'s `extract` mode (docs/ingestion.md): base URL such '
      + 'as `http://localhost:11434/v1` (Ollama), `http://localhost:8080/v1` (llama.cpp) or `https://api.openai.com/v1`. '
      + 'Unset: no model; `extract` is refused with a message naming these variables',
  },
  {
    name: 'MNEMO_LLM_MODEL',
    default: ({ llm }) => {
      if (llm) throw new BadValue('is required when MNEMO_LLM_URL is set');
      return {};
    },
    parse: (raw, { llm }) => (llm ? { llm: { ...llm, model: raw.trim() } } : {}),
    doc: 'with `MNEMO_LLM_URL`: the model name the server knows (`llama3.1:8b`, `gpt-4o-mini`, …)',
  },
  {
    name: 'MNEMO_LLM_API_KEY',
    parse: (raw, { llm }) => (llm ? { llm: { ...llm, apiKey: raw } } : {}),
    doc: 'with `MNEMO_LLM_URL`: sent as `Authorization: Bearer`',
  },
  {
    name: 'MNEMO_LLM_TIMEOUT_MS', default: '60000',
    parse: (raw, { llm }) => (llm ? { llm: { ...llm, timeoutMs: wholeNumber(1_000, 600_000)(raw) } } : {}),
    doc: 'how long one model call may take; 429, 5xx and timeouts are retried 3 times with backoff',
  },
  {
    name: 'MNEMO_INGEST_MAX_MESSAGES', default: String(DEFAULT_INGESTION_LIMITS.maxMessages),
    parse: (raw) => ({ ingestion: { ...DEFAULT_INGESTION_LIMITS, maxMessages: wholeNumber(1, 10_000)(raw) } }),
    doc: 'messages one ingestion request may hold',
  },
  {
    name: 'MNEMO_INGEST_MAX_CHARS', default: String(DEFAULT_INGESTION_LIMITS.maxTotalChars),
    parse: (raw, { ingestion }) => ({ ingestion: { ...ingestion, maxTotalChars: wholeNumber(1_000, 10_000_000)(raw) } }),
    doc: `characters of all the messages of one ingestion request together (one message: at most ${DEFAULT_INGESTION_LIMITS.maxMessageChars})`,
  },
  {
    name: 'MNEMO_INGEST_MAX_MODEL_CALLS', default: String(DEFAULT_INGESTION_LIMITS.maxModelCalls),
    parse: (raw, { ingestion }) => ({ ingestion: { ...ingestion, maxModelCalls: wholeNumber(1, 10_000)(raw) } }),
    doc: 'model calls one ingestion job may make (retries and repairs included); a job needing more fails and writes nothing',
  },
  {
    name: 'MNEMO_INGEST_TENANT_CONCURRENCY', default: String(DEFAULT_INGESTION_LIMITS.tenantConcurrency),
    parse: (raw, { ingestion }) => ({ ingestion: { ...ingestion, tenantConcurrency: wholeNumber(1, 64)(raw) } }),
    doc: `ingestion jobs of one tenant that run at once over all nodes (the others wait; more than ${DEFAULT_INGESTION_LIMITS.tenantQueue} queued or running are refused with 429)`,
  },
  {
    name: 'MNEMO_INGEST_LEASE_MS', parse: field('ingestionLeaseMs', wholeNumber(1_000, 3_600_000)), default: '60000',
    doc: 'how long a node\'s claim on a running ingestion job lasts (renewed every third of it while the job runs): a job '
      + 'whose node died (SIGKILL, power loss) is taken by another node, or by this one after a restart, this long after',
  },
  {
    name: 'MNEMO_INGEST_RETENTION_HOURS', parse: field('ingestionRetentionHours', wholeNumber(1, 24 * 366)), default: '168',
    doc: 'how long a completed or failed ingestion job (its conversation, proposals and result) is kept after it ended, in '
      + 'hours; older ones are deleted hourly with the events. Jobs waiting for review are kept until decided',
  },
  {
    name: 'MNEMO_REDIS_URL', parse: field('redisUrl', serviceUrl(['redis:', 'rediss:'])), default: () => ({ redisUrl: null }),
    doc: '`redis://` or `rediss://` URL of a Redis (one server, not Redis Cluster) that the nodes of a deployment '
      + 'share: rate-limit windows, the 5 streams per key and the per-tenant stream cap, the `user.activity` '
      + 'window, the turn of the periodic events (`system.health`, `analytics.update`, pruning: once per cluster) '
      + 'and the signal that brings one node\'s events to the streams of the others at once. While it is '
      + 'unreachable, rate-limited requests answer 503 `SERVICE_UNAVAILABLE` with `Retry-After: 1`. What stays '
      + 'per node: docs/architecture.md, "Redis"',
  },
  {
    name: 'MNEMO_METRICS', default: 'loopback',
    parse: (raw) => {
      const mode = oneOf(['off', 'loopback', 'token'] as const)(raw);
      // The token is MNEMO_METRICS_TOKEN's, read next.
      return { metrics: mode === 'token' ? { mode, token: '' } : { mode } };
    },
    doc: 'who may read `GET /metrics` (Prometheus text format; docs/operations.md, "Metrics"): `off` (the route '
      + 'does not exist: 404), `loopback` (clients connecting from 127.0.0.0/8 or `::1`, and only requests no proxy '
      + 'relayed (no `Forwarded` / `X-Forwarded-For` header); others get 403), `token` (any address presenting '
      + '`Authorization: Bearer <MNEMO_METRICS_TOKEN>`; others get 401)',
  },
  {
    name: 'MNEMO_METRICS_TOKEN', parse: (raw, above) => metricsToken(raw.trim(), above), default: (above) => metricsToken('', above),
    doc: 'for `MNEMO_METRICS=token`: the scraper\'s bearer token, at least 32 characters without spaces (`openssl '
      + 'rand -hex 32`), compared in constant time. Setting it with another mode stops the start (it would guard '
      + 'nothing)',
  },
];

/** The variables the server reads (a command's own, such as `mnemo mcp`'s MNEMO_API_KEY, are not). */
export const CONFIG_VARIABLES: readonly string[] = CONFIG_TABLE.filter((v) => v.parse).map((v) => v.name);

/** A variable's default as the docs and `--help` show it (Markdown). */
export const shownDefault = (v: ConfigVariable): string =>
  v.shown ?? (typeof v.default === 'string' ? `\`${v.default}\`` : '—');

export function loadConfig(env: Env = process.env): Config {
  const config = {} as Config;
  for (const v of CONFIG_TABLE) {
    if (!v.parse) continue;
    const raw = env[v.name];
    try {
      const fields = raw !== undefined && raw.trim() !== '' ? v.parse(raw, config)
        : typeof v.default === 'string' ? v.parse(v.default, config)
          : v.default?.(config, env) ?? {};
      Object.assign(config, fields);
    } catch (err) {
      if (err instanceof BadValue) throw new ConfigError(v.name, err.message);
      throw err;
    }
  }
  return config;
}
