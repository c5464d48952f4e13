/**
 * `npm run bench:calibration`: where the configured embedding model puts "relevant" (src/core/search/score-calibration.ts).
 * Stores the paraphrase set (test/fixtures/paraphrase-set.json: 60 everyday memories, one paraphrased question each,
 * 30 questions about nothing stored) in a fresh temp store through the real core, asks every question by semantic
 * search with threshold 0, and from the raw cosines of a documented split proposes the model's `relevantCosine`:
 * the calibration half is the pairs and unrelated questions of even index, the check half those of odd index.
 * `relevantCosine` = the smallest cosine above which at most 20 % of the calibration half's unrelated questions still
 * find something (their best cosine), so that ≥ 80 % of questions about nothing return nothing. Markdown to stdout.
 * Options: MNEMO_EMBEDDINGS (default local) picks the model, as for the server.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer } from '../../src/app/container.ts';
import { warmUp } from '../../src/app/embedder.factory.ts';
import { ALL_PERMISSIONS, type Principal } from '../../src/core/api-keys/api-key.types.ts';
import { calibrationFor, scoreCalibration, type ScoreCalibration } from '../../src/core/search/score-calibration.ts';
import { log } from '../lib/progress.ts';

interface ParaphraseSet {
  pairs: { topic: string; title: string; content: string; question: string }[];
  unrelated: string[];
}

const FIXTURE = new URL('../../test/fixtures/paraphrase-set.json', import.meta.url);
const UNRELATED_EMPTY = 0.8;

/** Per question: the raw cosine of each stored memory (by pair index), best first. */
type Ranking = { index: number; cosine: number }[];

function proposeRelevantCosine(unrelatedBest: number[]): number {
  const sorted = [...unrelatedBest].sort((a, b) => a - b);
  const kept = sorted[Math.ceil(UNRELATED_EMPTY * sorted.length) - 1]!;
  return Math.ceil(kept * 100) / 100; // rounded up to 2 decimals: a cosine equal to the cut-off is not relevant
}

function figures(rankings: Ranking[], pairIdx: number[], unrelated: Ranking[], cal: ScoreCalibration) {
  let first = 0, top3 = 0, firstAbove = 0, top3Above = 0;
  for (const i of pairIdx) {
    const r = rankings[i]!;
    const above = r.filter((h) => cal.score(h.cosine) >= 0.7);
    const rank = r.findIndex((h) => h.index === i);
    const rankAbove = above.findIndex((h) => h.index === i);
    if (rank === 0) first++;
    if (rank >= 0 && rank < 3) top3++;
    if (rankAbove === 0) firstAbove++;
    if (rankAbove >= 0 && rankAbove < 3) top3Above++;
  }
  const empty = unrelated.filter((r) => r.every((h) => cal.score(h.cosine) < 0.7)).length;
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
  return {
    first: pct(first, pairIdx.length), top3: pct(top3, pairIdx.length),
    firstAbove: pct(firstAbove, pairIdx.length), top3Above: pct(top3Above, pairIdx.length),
    empty: pct(empty, unrelated.length),
  };
}

async function main(): Promise<void> {
  const set = JSON.parse(await readFile(FIXTURE, 'utf8')) as ParaphraseSet;
  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-calibration-'));
  const config = loadConfig({ MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: process.env.MNEMO_EMBEDDINGS ?? 'local', MNEMO_LOG_LEVEL: 'silent' });
  const container = await createContainer(config);
  try {
    await warmUp(container.embedder);
    const modelId = container.embedder.modelId;
    const { key } = await container.apiKeys.create({ tenantId: 'calibration', userId: 'bench', tier: 'enterprise', mode: 'live' });
    const p = await container.apiKeys.authenticate(key);
    const scope = { tenantId: p.tenantId, mode: p.mode, workspace: 'default' };
    const actor: Principal = { ...p, scopes: new Set(ALL_PERMISSIONS) };
    const ids: string[] = [];
    for (const pair of set.pairs) ids.push((await container.memories.create(scope, actor, { title: pair.title, content: pair.content })).id);
    const indexOf = new Map(ids.map((id, i) => [id, i]));
    const ask = async (query: string): Promise<Ranking> => {
      const { hits } = await container.search.semantic({ scope, userId: 'bench', surface: 'bench' },
        { query, threshold: 0, limit: ids.length, filter: {} });
      return hits.map((h) => ({ index: indexOf.get(h.memory.id)!, cosine: h.cosine! }));
    };
    const rankings: Ranking[] = [];
    for (const pair of set.pairs) rankings.push(await ask(pair.question));
    const unrelated: Ranking[] = [];
    for (const q of set.unrelated) unrelated.push(await ask(q));

    const even = (_: unknown, i: number) => i % 2 === 0;
    const odd = (_: unknown, i: number) => i % 2 === 1;
    const pairIdx = set.pairs.map((_, i) => i);
    const proposed = proposeRelevantCosine(unrelated.filter(even).map((r) => r[0]?.cosine ?? -1));
    const current = calibrationFor(modelId);
    const rows: string[] = [];
    const row = (label: string, cal: ScoreCalibration, pairs: number[], un: Ranking[]) => {
      const f = figures(rankings, pairs, un, cal);
      rows.push(`| ${label} | ${cal.relevantCosine} | ${pairs.length} | ${f.first} | ${f.top3} | ${f.firstAbove} | ${f.top3Above} | ${un.length} | ${f.empty} |`);
    };
    row('calibration half (even)', scoreCalibration(proposed), pairIdx.filter(even), unrelated.filter(even));
    row('check half (odd)', scoreCalibration(proposed), pairIdx.filter(odd), unrelated.filter(odd));
    row('whole set, proposed', scoreCalibration(proposed), pairIdx, unrelated);
    row('whole set, in use', current, pairIdx, unrelated);
    row('whole set, (1 + cos) / 2', scoreCalibration(0.4), pairIdx, unrelated);
    process.stdout.write([
      `Model \`${modelId}\`: proposed relevantCosine **${proposed}** (in use: ${current.relevantCosine}).`, '',
      '| Split | relevantCosine | pairs | right first (any score) | right in top 3 (any score) | right first, score ≥ 0.7 | right in top 3, score ≥ 0.7 | unrelated | unrelated with no result ≥ 0.7 |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows, '',
    ].join('\n'));
  } finally {
    await container.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exit(1);
});
