import { createRng, type Rng } from './prng.ts';

/**
 * Synthetic but plausible memories and queries, built from word lists and sentence templates with a seeded PRNG:
 * the kind of notes an assistant keeps (decisions, incidents, preferences, how-tos). No data set is involved.
 */

const TEAMS = ['platform', 'billing', 'search', 'mobile', 'data', 'security', 'growth', 'infra', 'support', 'design'];
const PEOPLE = ['Alice', 'Bilal', 'Chen', 'Dana', 'Emeka', 'Fatima', 'Gustavo', 'Hana', 'Ivan', 'Julia', 'Kenji', 'Lena'];
const SYSTEMS = [
  'the billing service', 'the search index', 'the login flow', 'the mobile app', 'the nightly export job',
  'the API gateway', 'the Postgres cluster', 'the Redis cache', 'the onboarding wizard', 'the analytics pipeline',
  'the notification worker', 'the CI pipeline', 'the staging environment', 'the invoice generator', 'the webhook relay',
  'the feature flag service', 'the admin dashboard', 'the recommendation model', 'the audit log', 'the file uploader',
];
const TECH = [
  'Kubernetes', 'Terraform', 'TypeScript', 'Fastify', 'SQLite', 'Postgres', 'Kafka', 'gRPC', 'OpenTelemetry',
  'Grafana', 'React', 'Swift', 'Kotlin', 'Python', 'Rust', 'Docker', 'nginx', 'S3', 'Lambda', 'Elasticsearch',
];
const PROBLEMS = [
  'timeouts under load', 'a memory leak', 'slow cold starts', 'duplicate events', 'flaky tests', 'stale cache entries',
  'a race condition on retries', 'high p99 latency', 'connection pool exhaustion', 'clock skew between nodes',
  'an expired TLS certificate', 'a schema migration that locked a table', 'rate limit errors from a vendor',
  'missing indexes', 'unbounded queue growth', 'a broken deploy script',
];
const FIXES = [
  'added a circuit breaker', 'raised the pool size to 50', 'moved the work to a background queue',
  'added an index on created_at', 'pinned the dependency version', 'switched to exponential backoff',
  'split the job into batches of 500', 'cached the result for five minutes', 'rolled back the release',
  'rotated the credentials', 'added a health check', 'turned on request tracing', 'made the handler idempotent',
  'precomputed the aggregates nightly', 'set a hard timeout of two seconds',
];
const PREFERENCES = [
  'prefers short written summaries over meetings', 'wants pull requests under 400 lines',
  'likes dark mode in every tool', 'reviews code in the morning', 'asks for benchmarks before any optimisation',
  'prefers tabs over spaces', 'wants every incident to get a postmortem', 'uses British spelling in docs',
  'likes to pair on tricky migrations', 'prefers Slack threads to direct messages',
];
const ADJECTIVES = ['quick', 'careful', 'temporary', 'long-term', 'risky', 'cheap', 'simple', 'surprising', 'costly', 'clean'];
const WHEN = ['on Monday', 'last sprint', 'during the outage', 'before the launch', 'in the retro', 'yesterday',
  'in March', 'after the audit', 'at the planning meeting', 'during on-call'];
const MEMORY_TYPES = ['context', 'project', 'knowledge', 'reference', 'personal', 'workflow'];
const TAGS = ['decision', 'incident', 'howto', 'preference', 'meeting', 'todo', 'architecture', 'performance',
  'security', 'release', 'customer', 'oncall', ...TEAMS];

type Template = (r: Rng) => string;

const SENTENCES: Template[] = [
  (r) => `${r.pick(PEOPLE)} decided ${r.pick(WHEN)} that ${r.pick(SYSTEMS)} should move to ${r.pick(TECH)}.`,
  (r) => `We saw ${r.pick(PROBLEMS)} in ${r.pick(SYSTEMS)} ${r.pick(WHEN)}, and ${r.pick(PEOPLE)} ${r.pick(FIXES)}.`,
  (r) => `${r.pick(PEOPLE)} ${r.pick(PREFERENCES)}.`,
  (r) => `The ${r.pick(TEAMS)} team owns ${r.pick(SYSTEMS)}; ask ${r.pick(PEOPLE)} before changing it.`,
  (r) => `A ${r.pick(ADJECTIVES)} workaround for ${r.pick(PROBLEMS)} is that we ${r.pick(FIXES)}.`,
  (r) => `To deploy ${r.pick(SYSTEMS)}, run the ${r.pick(TECH)} pipeline and watch the ${r.pick(TECH)} dashboard.`,
  (r) => `${r.pick(SYSTEMS)} depends on ${r.pick(SYSTEMS)}, so a failure there shows up as ${r.pick(PROBLEMS)}.`,
  (r) => `The plan for next quarter is to replace ${r.pick(TECH)} with ${r.pick(TECH)} in ${r.pick(SYSTEMS)}.`,
  (r) => `${r.pick(PEOPLE)} and ${r.pick(PEOPLE)} agreed ${r.pick(WHEN)} to keep ${r.pick(SYSTEMS)} ${r.pick(ADJECTIVES)}.`,
  (r) => `Remember that ${r.pick(SYSTEMS)} has ${r.pick(PROBLEMS)} when traffic doubles.`,
  (r) => `The ${r.pick(TEAMS)} runbook says: if you see ${r.pick(PROBLEMS)}, check whether someone already ${r.pick(FIXES)}.`,
  (r) => `Costs for ${r.pick(SYSTEMS)} went up ${2 + r.int(40)}% ${r.pick(WHEN)}, mostly from ${r.pick(TECH)}.`,
];

const TITLES: Template[] = [
  (r) => `${cap(r.pick(TEAMS))}: ${r.pick(PROBLEMS)} in ${r.pick(SYSTEMS).replace(/^the /, '')}`,
  (r) => `Decision: ${r.pick(SYSTEMS).replace(/^the /, '')} on ${r.pick(TECH)}`,
  (r) => `How to deploy ${r.pick(SYSTEMS).replace(/^the /, '')}`,
  (r) => `${r.pick(PEOPLE)}'s preferences`,
  (r) => `Notes from the ${r.pick(TEAMS)} sync ${r.pick(WHEN)}`,
  (r) => `Incident ${1000 + r.int(9000)}: ${r.pick(PROBLEMS)}`,
];

const QUERIES: Template[] = [
  (r) => `how do we deploy ${r.pick(SYSTEMS)}`,
  (r) => `what did we decide about ${r.pick(TECH)}`,
  (r) => `who owns ${r.pick(SYSTEMS)}`,
  (r) => `fix for ${r.pick(PROBLEMS)}`,
  (r) => `what does ${r.pick(PEOPLE)} prefer`,
  (r) => `${r.pick(PROBLEMS)} in ${r.pick(SYSTEMS)}`,
  (r) => `why did costs go up for ${r.pick(SYSTEMS)}`,
  (r) => `${r.pick(TEAMS)} team runbook`,
  (r) => `migration from ${r.pick(TECH)} to ${r.pick(TECH)}`,
];

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export interface MemoryBody {
  title: string;
  content: string;
  tags: string[];
  memory_type: string;
}

export interface SearchBody {
  query: string;
  limit: number;
  threshold: number;
}

/** An endless, reproducible stream of memory bodies (2 to 6 sentences each). */
export function memoryGenerator(seed: number): () => MemoryBody {
  const r = createRng(seed);
  return () => {
    const sentences = Array.from({ length: 2 + r.int(5) }, () => r.pick(SENTENCES)(r));
    const tags = [...new Set(Array.from({ length: 1 + r.int(3) }, () => r.pick(TAGS)))];
    return { title: r.pick(TITLES)(r), content: sentences.join(' '), tags, memory_type: r.pick(MEMORY_TYPES) };
  };
}

/** `count` distinct search queries. */
export function searchQueries(seed: number, count: number): string[] {
  const r = createRng(seed);
  const out = new Set<string>();
  for (let guard = 0; out.size < count && guard < count * 50; guard++) out.add(r.pick(QUERIES)(r));
  return [...out];
}
