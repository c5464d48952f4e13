import { table } from '../lib/markdown.ts';
import { median, percentile } from '../lib/stats.ts';
import { METHOD_LABELS, METHODS, type EmbedderRun, type Method, type QuestionResult } from './evaluate.ts';
import { ANSWERABLE_CATEGORIES, CATEGORY_LABELS } from './locomo.ts';

/** Mean per-question recall in percent: found / evidence, averaged over questions. */
export function meanRecall(results: readonly QuestionResult[], method: Method, k: 5 | 10): number {
  if (results.length === 0) return Number.NaN;
  const sum = results.reduce((s, r) => s + (k === 5 ? r.found[method].at5 : r.found[method].at10) / r.evidence, 0);
  return (100 * sum) / results.length;
}

const pct = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 1) : 'n/a');

export function overallTable(runs: readonly EmbedderRun[]): string {
  const rows = runs.flatMap((run) => METHODS.map((m) => {
    const latencies = run.results.map((r) => r.found[m].ms);
    return [run.embedder, METHOD_LABELS[m], pct(meanRecall(run.results, m, 5)), pct(meanRecall(run.results, m, 10)),
      ms(median(latencies)), ms(percentile(latencies, 95))];
  }));
  return table(['Embedder', 'Method', 'Recall@5 (%)', 'Recall@10 (%)', 'Median ms', 'p95 ms'], rows, 'llrrrr');
}

export function categoryTable(runs: readonly EmbedderRun[]): string {
  const first = runs[0]?.results ?? [];
  const header = ['Embedder', 'Method', ...ANSWERABLE_CATEGORIES.map((c) =>
    `${c} ${CATEGORY_LABELS[c]} (n=${first.filter((r) => r.category === c).length})`)];
  const rows = runs.flatMap((run) => METHODS.map((m) => [run.embedder, METHOD_LABELS[m], ...ANSWERABLE_CATEGORIES.map((c) => {
    const subset = run.results.filter((r) => r.category === c);
    return `${pct(meanRecall(subset, m, 5))} / ${pct(meanRecall(subset, m, 10))}`;
  })]));
  return table(header, rows, 'llrrrr');
}

/** The target: hybrid (rerank true) with the local model vs keyword-only, in points of Recall@10. */
export function targetLine(runs: readonly EmbedderRun[]): string | undefined {
  const local = runs.find((r) => r.embedder === 'local');
  if (!local) return undefined;
  const hybrid = meanRecall(local.results, 'hybrid', 10);
  const keyword = meanRecall(local.results, 'keyword', 10);
  const delta = hybrid - keyword;
  const norerank = meanRecall(local.results, 'hybrid-norerank', 10) - keyword;
  return `Target (hybrid with the local model ≥ keyword-only + 5 points of Recall@10): hybrid rerank true ` +
    `${pct(hybrid)} − keyword ${pct(keyword)} = **${delta >= 0 ? '+' : ''}${delta.toFixed(1)} points** ` +
    `(${delta >= 5 ? 'met' : 'missed'}); rerank false: ${norerank >= 0 ? '+' : ''}${norerank.toFixed(1)} points.`;
}

/** How much evidence the two legs' top 10 lists hold between them: no fusion choosing 10 of them can do better. */
export function ceilingLines(runs: readonly EmbedderRun[]): string {
  return runs.map((r) => {
    const union = r.results.length ? (100 * r.results.reduce((s, q) => s + q.union10 / q.evidence, 0)) / r.results.length : Number.NaN;
    return `- ${r.embedder}: evidence in the union of the keyword top 10 and the semantic top 10 (up to 20 results): ` +
      `**${pct(union)}%**, against keyword-only Recall@10 ${pct(meanRecall(r.results, 'keyword', 10))}%`;
  }).join('\n');
}

export function ingestLines(runs: readonly EmbedderRun[]): string {
  return runs.map((r) => `- Ingestion, ${r.embedder} (\`${r.modelId}\`): ${r.turns} turns in ${r.ingestSeconds.toFixed(1)} s = ` +
    `${Math.round(r.turns / r.ingestSeconds)} memories/s (model warm-up before it: ${(r.warmupMs / 1000).toFixed(1)} s)`).join('\n');
}
