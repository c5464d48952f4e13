import { Option, type Command } from 'commander';
import { systemClock } from '../core/clock.ts';
import { coveredBy, type ReindexResult } from '../core/embeddings/reindex.ts';
import type { ReindexProgressRecord } from '../core/embeddings/reindex-progress.repository.ts';
import { reindexRunView, reindexWithRecord } from '../core/embeddings/reindex-record.ts';
import type { ScopeFilter, VectorCoverage } from '../core/memories/memory-maintenance.ts';
import { memoryEmbeddingText } from '../core/memories/memory.service.ts';
import { lineCountProgress, terminalCountProgress } from './cli-progress.ts';
import { CliError, withStore, type CliIo } from './cli-store.ts';
import { createEmbedder, warmUp } from './embedder.factory.ts';
import { parseCount, scopeFilterOptions, scopeFilterOf, type ScopeFilterFlags } from './cli-options.ts';

/** What `--status` prints: the memories of the filter, and each model's vectors among them. */
function describeCoverage(coverage: VectorCoverage, modelId: string, dims: number): string {
  const lines = [`memories: ${coverage.memories}`];
  const configured = coveredBy(coverage, modelId, dims);
  lines.push(`configured model ${modelId}: ${configured}/${coverage.memories}${configured === coverage.memories ? ' (complete)' : ' (reindex needed)'}`);
  for (const m of coverage.models) {
    if (m.modelId === modelId && m.dims === dims) continue;
    lines.push(`other model ${m.modelId} (${m.dims} dimensions): ${m.vectors} vectors`);
  }
  return `${lines.join('\n')}\n`;
}

/** What `--status` prints of the store's last run (the record `/health` shows as `embeddings.reindex_run`). */
function describeLastRun(run: ReindexProgressRecord | null, now: Date): string {
  if (!run) return 'last run: none recorded\n';
  const view = reindexRunView(run, now);
  const state = view.stopReason ? `${view.state} (${view.stopReason})` : view.state;
  return `last run: ${state}, ${run.modelId}: ${run.done}/${run.total} memories, ${run.written} vectors written; `
    + `started ${run.startedAt.toISOString()}, last written ${run.updatedAt.toISOString()}\n`;
}

/** Ctrl-C or SIGTERM: the batch under way finishes and is kept, then the run stops (run again to resume). */
function stopOnSignals(controller: AbortController, io: CliIo): () => void {
  const stop = (signal: NodeJS.Signals) => {
    io.err(`\nmnemo: ${signal}: stopping after the batch under way (run the command again to resume)\n`);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
}

interface ReindexFlags extends ScopeFilterFlags {
  batchSize: number;
  limit?: number;
  status?: boolean;
  prune?: boolean;
}

export function registerReindexCommand(program: Command, io: CliIo): void {
  scopeFilterOptions(program.command('reindex'))
    .description('give every memory a vector of the configured model (MNEMO_EMBEDDINGS, MNEMO_EMBEDDINGS_MODEL, ...), '
      + 'beside the vectors it has. Run it while the server still runs on the old model: searches keep answering from '
      + 'the old vectors; restart the server on the new model once this says complete. Ctrl-C or SIGTERM stops after '
      + 'the batch under way; running it again resumes where it stopped. Progress on stderr, a summary on stdout; exit 0 '
      + 'only when every memory (of the filter) has a vector of the configured model.')
    .option('--batch-size <n>', 'memories embedded per embedder call and written per transaction', parseCount, 32)
    .option('--limit <n>', 'stop after writing about this many vectors (whole batches); run again to go on', parseCount)
    .option('--status', 'only print how many memories have a vector of each model; exit 1 when a reindex is needed')
    .option('--prune', 'once complete, delete the vectors of every other model (frees room; switching back then needs a reindex)')
    .addOption(new Option('--no-progress', 'no progress on stderr'))
    .action(async (opts: ReindexFlags & { progress: boolean }) => {
      const filter: ScopeFilter = scopeFilterOf(opts);
      await withStore(io, 'existing', async (storage, config) => {
        const embedder = createEmbedder(config.embeddings);
        try {
          if (opts.status) {
            const coverage = await storage.memories.vectorCoverage(filter);
            io.out(describeCoverage(coverage, embedder.modelId, embedder.dimensions));
            io.out(describeLastRun(await storage.reindexProgress.latest(), systemClock.now()));
            if (coveredBy(coverage, embedder.modelId, embedder.dimensions) < coverage.memories) throw new CliError('reindex needed');
            return;
          }
          await warmUp(embedder);
          io.err(`mnemo: reindex with ${embedder.modelId} (${embedder.dimensions} dimensions)\n`);
          const lines = lineCountProgress('reindex', 'memories', (s) => io.err(s));
          const progress = !opts.progress ? null : io.terminal ? await terminalCountProgress('reindex', 'memories', lines) : lines;
          const controller = new AbortController();
          const release = stopOnSignals(controller, io);
          let result: ReindexResult;
          try {
            // Writes the store's progress record as it goes (/health's embeddings.reindex_run on every node).
            result = await reindexWithRecord({
              memories: storage.memories, records: storage.reindexProgress, clock: systemClock, embedder,
              textOf: (title, content) => memoryEmbeddingText(title, content, config.maxEmbedChars),
            }, {
              filter, batchSize: opts.batchSize, limit: opts.limit, signal: controller.signal,
              onProgress: (p) => progress?.update(p.done, p.total),
            });
          } finally {
            progress?.stop();
            release();
          }
          io.out(`reindex ${result.state}: ${result.written} vectors written; ${result.modelId}: ${result.done}/${result.total} memories\n`);
          if (result.state !== 'complete') {
            throw new CliError(result.state === 'limited'
              ? `stopped after --limit ${opts.limit} vectors; run the command again to go on`
              : 'stopped before the end; run the command again to resume');
          }
          if (opts.prune) {
            const dropped = await storage.memories.dropOtherVectors(filter, embedder.modelId);
            io.out(`pruned: ${dropped} vectors of other models deleted\n`);
          }
        } finally {
          await embedder.close();
        }
      });
    });
}

