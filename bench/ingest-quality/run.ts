/**
 * `npm run bench:ingest-quality`: what ingestion's `extract` mode keeps of a conversation. Builds the real core in
 * process (fresh temp SQLite store), ingests each LoCoMo conversation session by session through an OpenAI-compatible
 * chat model (policy `auto`), and reports per conversation: proposals by action, memories written, model calls and
 * tokens, failed jobs, wall time; evidence recall (the questions' evidence turns that a written memory's source turns
 * cover) and retrieval Recall@10 (hybrid search over the written memories). Markdown goes to stdout, progress to
 * stderr; `--help` lists options.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { PROMPT_VERSION } from '../../src/core/ingestion/prompts.ts';
import type { IngestionMode } from '../../src/core/ingestion/ingestion.types.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import { KEYWORD_WEIGHT, SEARCH_LIMIT, SEMANTIC_WEIGHT, evaluate, scoredQuestions, type EmbedderKind } from './evaluate.ts';
import { categoryTable, conversationTable, detailLines, failureLines } from './report.ts';
import { ROLE_MAPPINGS, loadSessions, type RoleMapping } from './sessions.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_DATA = resolve(REPO_ROOT, '../shared/data/locomo10.json');
export const SECTION_ID = 'ingest-quality';
export const SECTION_TITLE = 'Ingestion quality (LoCoMo)';

const ROLE_TEXT: Record<RoleMapping, string> = {
  'a-user': '`speaker_a` → `user`, `speaker_b` → `assistant`',
  'b-user': '`speaker_b` → `user`, `speaker_a` → `assistant`',
  'all-user': 'both speakers → `user`',
};

interface Options {
  llmUrl: string | undefined;
  model: string | undefined;
  apiKey: string | undefined;
  mode: IngestionMode;
  conversations: number | undefined;
  sessions: number | undefined;
  data: string;
  embedder: EmbedderKind;
  roles: RoleMapping;
  json: string | undefined;
  write: boolean;
  file: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
  return n;
}

/** The command as run, with an API key given on the command line masked (the line goes into BENCHMARKS.md). */
export function shownCommand(argv: readonly string[]): string {
  const shown = argv.map((a, i) => (argv[i - 1] === '--api-key' ? '***' : a.startsWith('--api-key=') ? '--api-key=***' : a));
  return `npm run bench:ingest-quality${shown.length > 0 ? ` -- ${shown.join(' ')}` : ''}`;
}

/** The server's URL without any credentials or query it may carry. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

async function run(o: Options, argv: string[]): Promise<void> {
  if (!existsSync(o.data)) throw new Error(`LoCoMo not found at ${o.data} (give its path with --data)`);
  const machine = describeMachine();
  const command = shownCommand(argv);
  const startedAt = new Date();
  log(`mnemo bench:ingest-quality: ${command}\n${machineLine(machine)}`);

  const conversations = await loadSessions(o.data, { conversations: o.conversations, sessions: o.sessions, roles: o.roles });
  const sessions = conversations.reduce((n, c) => n + c.sessions.length, 0);
  const turns = conversations.reduce((n, c) => n + c.turns.length, 0);
  const scored = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  const answerable = conversations.reduce((n, c) => n + c.questions.filter((q) => q.evidence.length > 0).length, 0);
  const undated = conversations.reduce((n, c) => n + c.sessions.filter((s) => s.at === null).length, 0);
  log(`LoCoMo: ${conversations.length} conversations, ${sessions} sessions, ${turns} turns; ${scored} questions scored` +
    `${undated > 0 ? `; ${undated} sessions without a readable date` : ''}`);

  const llm = o.mode === 'extract' ? { url: o.llmUrl!, model: o.model!, apiKey: o.apiKey } : null;
  const result = await evaluate(conversations, { mode: o.mode, embedder: o.embedder, roles: o.roles, llm });
  const seconds = (Date.now() - startedAt.getTime()) / 1000;

  const limited = o.sessions !== undefined
    ? ` (the first ${o.sessions} sessions of each; only questions whose every evidence turn lies in them are scored, ` +
      `${scored} of ${answerable})`
    : '';
  const body = [
    `- Command: \`${command}\``,
    `- Date: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round(seconds)} s)`,
    `- Machine: ${machineLine(machine)}`,
    o.mode === 'extract'
      ? `- Model: \`${o.model}\` at ${shownUrl(o.llmUrl!)}; prompts \`${PROMPT_VERSION}\`; embedder \`${result.embedderModel}\``
      : `- Mode \`raw\` (no model: one memory per turn, the baseline); embedder \`${result.embedderModel}\``,
    '- Data: LoCoMo (Maharana et al., ACL 2024), `locomo10.json` read at run time from outside the repository ' +
      '(CC BY-NC 4.0: evaluation only; no part of it is copied into this repository).',
    `- Corpus: ${plural(conversations.length, 'conversation')}, ${plural(sessions, 'session')}, ${turns} turns${limited}; ` +
      `**${scored} questions** of categories 1–4 scored.`,
    '',
    `**Protocol.** The real core in process, a fresh temp SQLite store; a key holding \`memories:auto_ingest\`. Each session is one ` +
      `ingestion (mode \`${o.mode}\`, policy \`auto\`), in order, drained before the next starts` +
      `${o.mode === 'extract' ? ', so later sessions are decided against the memories of earlier ones (supersede, skip)' : ''}. ` +
      `Messages: ${ROLE_TEXT[o.roles]} (\`--roles ${o.roles}\`), ` +
      'content `speaker: text`, timestamp the session\'s date_time read as UTC. ' +
      'A memory\'s source turns are its fact\'s `sources` mapped to dia_ids, plus those of later facts skipped as its duplicates. ' +
      '**Evidence recall**: the distinct evidence turns of the scored questions covered by some written memory\'s source turns ' +
      `(superseded ones included). **Retrieval Recall@10**: hybrid search (weights ${SEMANTIC_WEIGHT}/${KEYWORD_WEIGHT}, rerank true, ` +
      `threshold 0, limit ${SEARCH_LIMIT}) of each question in its conversation's workspace; the share of its evidence turns among ` +
      'the source turns of the memories returned, averaged over questions (bench:quality\'s measure, with memories for turns).',
    '',
    conversationTable(result),
    '',
    'Per category:',
    '',
    categoryTable(result),
    '',
    detailLines(result),
    failureLines(result),
  ].join('\n');

  process.stdout.write(`## ${SECTION_TITLE}\n\n${body}\n`);
  if (o.json) {
    await writeFile(o.json, JSON.stringify({ command, startedAt, machine, promptVersion: PROMPT_VERSION, result }, null, 1));
    log(`wrote per-job and per-question results to ${o.json}`);
  }
  if (o.write) {
    const file = resolve(REPO_ROOT, o.file);
    await updateSections(file, [{ id: SECTION_ID, title: SECTION_TITLE, body }]);
    log(`updated ${file}: section ${SECTION_ID}`);
  }
}

const program = new Command('npm run bench:ingest-quality --')
  .description('Ingestion quality on LoCoMo: what extract mode writes from each session (evidence recall of the written\n' +
    'memories, retrieval Recall@10 over them), with model calls and tokens.\n' +
    'Markdown results go to stdout; progress goes to stderr.')
  .addOption(new Option('--llm-url <url>', 'OpenAI-compatible chat-completions base URL (Ollama: http://localhost:11434/v1)').env('MNEMO_LLM_URL'))
  .addOption(new Option('--model <name>', 'the model name the server knows (llama3.1:8b, gpt-4o-mini, …)').env('MNEMO_LLM_MODEL'))
  .addOption(new Option('--api-key <key>', 'sent as Authorization: Bearer (masked in the report)').env('MNEMO_LLM_API_KEY'))
  .addOption(new Option('--mode <mode>', 'extract (the model) or raw (one memory per turn, no model: the baseline)')
    .choices(['extract', 'raw']).default('extract'))
  .addOption(new Option('--conversations <n>', 'only the first n conversations').argParser(positive))
  .addOption(new Option('--sessions <n>', 'only the first n sessions of each conversation (a cheap try)').argParser(positive))
  .option('--data <path>', 'locomo10.json (CC BY-NC 4.0; read in place, never copied)', DEFAULT_DATA)
  .addOption(new Option('--embedder <kind>', 'embedder of the store').choices(['local', 'hashing']).default('local'))
  .addOption(new Option('--roles <mapping>', 'speakers to roles: a-user (speaker_a user, speaker_b assistant), b-user (swapped), all-user')
    .choices([...ROLE_MAPPINGS]).default('a-user'))
  .option('--json <path>', 'also write per-job (proposals included) and per-question results as JSON; keep it outside the repository')
  .option('--write', 'also update the "Ingestion quality (LoCoMo)" section of BENCHMARKS.md', false)
  .option('--file <path>', 'the markdown file --write updates', 'BENCHMARKS.md')
  .showHelpAfterError()
  .addHelpText('after', [
    '',
    'Environment: MNEMO_LLM_TIMEOUT_MS and MNEMO_INGEST_* (e.g. MNEMO_INGEST_MAX_MODEL_CALLS) apply as on a server.',
    '',
    'Examples:',
    '  npm run bench:ingest-quality -- --mode raw --conversations 1 --embedder hashing        the harness alone (seconds)',
    '  npm run bench:ingest-quality -- --llm-url http://localhost:11434/v1 --model llama3.1:8b --conversations 1 --sessions 2',
    '  npm run bench:ingest-quality -- --llm-url http://localhost:11434/v1 --model llama3.1:8b --conversations 2 --write',
    '',
  ].join('\n'))
  .action(async (opts: Options) => {
    if (opts.mode === 'extract' && (!opts.llmUrl || !opts.model)) {
      program.error('mode extract needs a model: give --llm-url and --model (or MNEMO_LLM_URL and MNEMO_LLM_MODEL), or use --mode raw');
    }
    if (opts.write && opts.mode === 'raw') program.error('--write records a model\'s figures; a --mode raw run must not overwrite them');
    await run(opts, process.argv.slice(2));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  log(`\nbench:ingest-quality FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
