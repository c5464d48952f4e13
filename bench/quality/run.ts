/**
 * `npm run bench:quality`: retrieval quality on LoCoMo, a real conversational-memory data set. Builds the real core
 * in process (fresh temp SQLite store per embedder), stores every dialogue turn as one memory in its conversation's
 * workspace, asks every answerable question (categories 1–4) by keyword, semantic and hybrid search, and reports
 * Recall@5 / Recall@10 of the evidence turns. Markdown goes to stdout, progress to stderr; `--help` lists options.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import {
  KEYWORD_WEIGHT, SEARCH_LIMIT, SEMANTIC_WEIGHT, evaluateEmbedder, type EmbedderKind, type EmbedderRun,
} from './evaluate.ts';
import { loadLocomo } from './locomo.ts';
import { categoryTable, ceilingLines, ingestLines, overallTable, targetLine } from './report.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_DATA = resolve(REPO_ROOT, '../shared/data/locomo10.json');
const EMBEDDERS: readonly EmbedderKind[] = ['local', 'hashing'];
export const SECTION_ID = 'quality';
export const SECTION_TITLE = 'Search quality (LoCoMo)';

interface QualityOptions {
  embedders: EmbedderKind[];
  limitConversations: number | undefined;
  concurrency: number;
  data: string;
  write: boolean;
  file: string;
  json: string | undefined;
}

function embedderList(value: string): EmbedderKind[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((s) => !(EMBEDDERS as readonly string[]).includes(s));
  if (items.length === 0 || bad.length > 0) throw new InvalidArgumentError(`use a comma-separated list of ${EMBEDDERS.join(', ')}`);
  return [...new Set(items)] as EmbedderKind[];
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
  return n;
}

async function run(o: QualityOptions, argv: string[]): Promise<void> {
  if (!existsSync(o.data)) throw new Error(`LoCoMo not found at ${o.data} (give its path with --data)`);
  const machine = describeMachine();
  const command = `npm run bench:quality${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const startedAt = new Date();
  log(`mnemo bench:quality: ${command}\n${machineLine(machine)}`);

  const all = await loadLocomo(o.data);
  const conversations = all.slice(0, o.limitConversations ?? all.length);
  const asked = conversations.reduce((n, c) => n + c.questions.length, 0);
  const skipped = conversations.reduce((n, c) => n + c.questions.filter((q) => q.evidence.length === 0).length, 0);
  const dropped = conversations.reduce((n, c) => n + c.questions.reduce((m, q) => m + q.droppedEvidence, 0), 0);
  const turns = conversations.reduce((n, c) => n + c.turns.length, 0);
  log(`LoCoMo: ${conversations.length} conversations, ${turns} turns, ${asked} questions in categories 1–4 ` +
    `(${skipped} without usable evidence skipped)`);

  const runs: EmbedderRun[] = [];
  for (const embedder of o.embedders) runs.push(await evaluateEmbedder(embedder, conversations, { concurrency: o.concurrency }));
  const seconds = (Date.now() - startedAt.getTime()) / 1000;

  const target = targetLine(runs);
  const body = [
    `- Command: \`${command}\``,
    `- Date: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round(seconds)} s)`,
    `- Machine: ${machineLine(machine)}`,
    '- Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024), ' +
      '`locomo10.json` from snap-research/LoCoMo, read at run time from outside the repository. License CC BY-NC 4.0: ' +
      'used for evaluation only; no part of it is copied into this repository.',
    `- Corpus: ${conversations.length} conversations, ${turns} turns (one memory each). Questions: ${asked} in categories 1–4 ` +
      `(category 5, adversarial, is skipped); ${skipped} left without evidence naming a turn are skipped, so ` +
      `**${asked - skipped} questions** are scored (${dropped} evidence ids naming no turn were dropped).`,
    '',
    '**Protocol.** The real core in process (`loadConfig` + `createContainer`, fresh temp SQLite store per embedder), ' +
      'an enterprise key\'s tenant used directly through the services (no HTTP). Each turn becomes one memory in its ' +
      'conversation\'s workspace: content `speaker: text` (plus ` [image: caption]` when the turn shares a picture), ' +
      'title `speaker, session date`, metadata `{dia_id, speaker, session, session_date}`, created 64 in flight. Each ' +
      `question is searched in its conversation's workspace with limit ${SEARCH_LIMIT}: keyword-only (BM25), semantic-only ` +
      `(threshold 0) and hybrid (weights ${SEMANTIC_WEIGHT}/${KEYWORD_WEIGHT}, rerank true and false, threshold 0: no relevance floor). ` +
      'Recall@k = share of the question\'s evidence turns among the top k hits, averaged over questions. ' +
      'Searches run one at a time; latency is the wall time of the service call (query embedding included).',
    '',
    ingestLines(runs),
    '',
    `Mean Recall@5 and Recall@10 over all ${asked - skipped} scored questions, and search latency:`,
    '',
    overallTable(runs),
    '',
    'Per category, Recall@5 / Recall@10 (%):',
    '',
    categoryTable(runs),
    ...(target ? ['', target] : []),
    '',
    'Complementarity of the two legs (a ceiling for any fusion of their top 10 lists into 10 results):',
    '',
    ceilingLines(runs),
  ].join('\n');

  process.stdout.write(`## ${SECTION_TITLE}\n\n${body}\n`);
  if (o.json) {
    await writeFile(o.json, JSON.stringify({ command, startedAt, machine, runs }, null, 1));
    log(`wrote per-question results to ${o.json}`);
  }
  if (o.write) {
    const file = resolve(REPO_ROOT, o.file);
    await updateSections(file, [{ id: SECTION_ID, title: SECTION_TITLE, body }]);
    log(`updated ${file}: section ${SECTION_ID}`);
  }
}

const program = new Command('npm run bench:quality --')
  .description('Search quality on LoCoMo: Recall@5/@10 of keyword, semantic and hybrid search through the real core.\n' +
    'Markdown results go to stdout; progress goes to stderr.')
  .addOption(new Option('--embedders <list>', 'embedders to evaluate: local, hashing (comma-separated)')
    .argParser(embedderList).default([...EMBEDDERS], 'local,hashing'))
  .addOption(new Option('--limit-conversations <n>', 'only the first n conversations (quick run)').argParser(positive))
  .addOption(new Option('--concurrency <n>', 'memories created in flight while ingesting').argParser(positive).default(64))
  .option('--data <path>', 'locomo10.json (CC BY-NC 4.0; read in place, never copied)', DEFAULT_DATA)
  .option('--write', 'also update the "Search quality (LoCoMo)" section of BENCHMARKS.md (full runs only)', false)
  .option('--file <path>', 'the markdown file --write updates', 'BENCHMARKS.md')
  .option('--json <path>', 'also write per-question results as JSON (for comparing runs)')
  .showHelpAfterError()
  .addHelpText('after', [
    '',
    'Examples:',
    '  npm run bench:quality -- --limit-conversations 1 --embedders hashing   smoke run (seconds)',
    '  npm run bench:quality -- --write                                      full run; updates BENCHMARKS.md',
    '',
  ].join('\n'))
  .action(async (opts: QualityOptions) => {
    if (opts.write && opts.limitConversations !== undefined) {
      program.error('--write records reference numbers; a --limit-conversations run must not overwrite them');
    }
    await run(opts, process.argv.slice(2));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  log(`\nbench:quality FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
