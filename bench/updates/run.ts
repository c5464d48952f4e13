/**
 * `npm run bench:updates`: knowledge updates. Subjects whose value changes over time (bench/updates/fixture.ts), each
 * written as 2–4 successive facts among distractors, twice: add-only (as users of add-only memory services do) and
 * with each new fact superseding the one before it. Per arm and search kind, at the surface's defaults: is the
 * current fact first, is a stale fact in the top 5, and does `as_of` (a moment between two writes) put the fact valid
 * then first. Markdown to stdout, progress to stderr, per-question results to a JSON file; `--help` lists options.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import { REPO_ROOT, type EmbedderKind } from '../lib/server.ts';
import { coreBackend, G1_MEMORIES, G3_HYBRID, G3_SEMANTIC, httpBackend, type Backend, type SearchDefaults, type Via } from './backends.ts';
import { ARMS, FIRST_WAS, KINDS, TOP, preflight, runArm, violations, type EmbedderRunResult, type KindSummary } from './evaluate.ts';
import { DISTRACTORS, SUBJECTS, fixtureProblems } from './fixture.ts';

export const SECTION_ID = 'updates';
export const SECTION_TITLE = 'Knowledge updates';
const EMBEDDERS: readonly EmbedderKind[] = ['local', 'hashing'];
const DEFAULT_JSON = 'bench/updates/results/latest.json';

interface Options {
  embedders: EmbedderKind[];
  via: Via;
  json: string | false;
  write: boolean;
  file: string;
}

function embedderList(value: string): EmbedderKind[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((s) => !(EMBEDDERS as readonly string[]).includes(s));
  if (items.length === 0 || bad.length > 0) throw new InvalidArgumentError(`use a comma-separated list of ${EMBEDDERS.join(', ')}`);
  return [...new Set(items)] as EmbedderKind[];
}

const pct = (n: number, of: number) => (of === 0 ? 'n/a' : `${(100 * n / of).toFixed(1)} %`);
const rate = (n: number, of: number) => `${pct(n, of)} (${n}/${of})`;

export function resultsTable(runs: readonly EmbedderRunResult[]): string {
  const lines = [
    `| embedder | arm | search | current fact first | current fact in top ${TOP} | stale fact in top ${TOP} | as_of: fact valid then first | as_of: older fact in top ${TOP} | no hit (current / as_of) | mean ms |`,
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of runs) {
    for (const a of r.arms) {
      for (const k of a.kinds) {
        const s: KindSummary = k.summary;
        lines.push(`| ${r.modelId} | ${a.arm} | ${k.kind} | ${rate(s.currentFirst, s.questions)} | ${rate(s.currentInTop, s.questions)} | ` +
          `${rate(s.staleInTop, s.questions)} | ${rate(s.asOfFirst, s.questions)} | ${rate(s.asOfOlderInTop, s.questions)} | ` +
          `${s.currentEmpty} / ${s.asOfEmpty} | ${k.meanMs.toFixed(1)} |`);
      }
    }
  }
  return lines.join('\n');
}

/** For the questions about now: what came first (counts of subjects). */
export function firstPlaceTable(runs: readonly EmbedderRunResult[]): string {
  const columns = FIRST_WAS.filter((f) => f !== 'newer fact');
  const names: Record<string, string> = {
    expected: 'the current fact', 'older fact': 'an older fact of the subject', 'near-duplicate': 'a near-duplicate distractor',
    'other memory': 'another memory', 'no hit': 'no hit',
  };
  const lines = [
    `| embedder | arm | search | ${columns.map((c) => names[c]).join(' | ')} |`,
    `| --- | --- | --- | ${columns.map(() => '---:').join(' | ')} |`,
  ];
  for (const r of runs) {
    for (const a of r.arms) {
      for (const k of a.kinds) lines.push(`| ${r.modelId} | ${a.arm} | ${k.kind} | ${columns.map((c) => k.summary.currentFirstWas[c]).join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

const show = (v: unknown) => (v === null ? 'not declared' : String(v));
export function defaultsLine(d: SearchDefaults, via: Via): string {
  const source = via === 'http' ? 'as the served `/openapi.json` declares them' : 'the surfaces\' documented defaults (core run)';
  return `Defaults used (${source}): semantic threshold ${show(d.semantic.threshold)}; hybrid threshold ${show(d.hybrid.threshold)}, ` +
    `weights ${show(d.hybrid.semanticWeight)}/${show(d.hybrid.keywordWeight)}, rerank ${show(d.hybrid.rerank)}. ` +
    `Validity fields: ${d.fields.asOf ?? 'as_of (not declared)'}, ${d.fields.includeExpired ?? 'include_expired (not declared)'}, ` +
    `${d.fields.supersedes ?? 'supersedes (not declared)'}.`;
}

function preflightLines(runs: readonly EmbedderRunResult[]): string {
  return runs.map((r) => {
    const failed = r.preflight.filter((c) => c.ok === false);
    const unknown = r.preflight.filter((c) => c.ok === null);
    const head = `${r.embedder}: ${r.preflight.filter((c) => c.ok).length}/${r.preflight.length} checks passed`;
    const notes = [...failed.map((c) => `FAILED ${c.name} (${c.detail})`), ...unknown.map((c) => `not checked: ${c.name} (${c.detail})`)];
    return `- ${head}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`;
  }).join('\n');
}

async function evaluate(embedder: EmbedderKind, via: Via): Promise<EmbedderRunResult> {
  log(`\n== ${embedder}, via ${via} ==`);
  const backend: Backend = via === 'http' ? await httpBackend(embedder) : await coreBackend(embedder);
  try {
    log(`model ${backend.modelId}; ${defaultsLine(backend.defaults, via)}`);
    const checks = await preflight(backend);
    for (const c of checks) log(`  preflight ${c.ok === true ? 'ok  ' : c.ok === false ? 'FAIL' : '??  '} ${c.name}: ${c.detail}`);
    const arms = [];
    for (const arm of ARMS) arms.push(await runArm(backend, arm, `updates-${arm}`, embedder));
    return { embedder, modelId: backend.modelId, via, defaults: backend.defaults, preflight: checks, arms };
  } finally {
    await backend.close();
  }
}

async function run(o: Options, argv: string[]): Promise<void> {
  const problems = fixtureProblems();
  if (problems.length > 0) throw new Error(`bench/updates/fixture.ts is not usable:\n${problems.join('\n')}`);
  const machine = describeMachine();
  const command = `npm run bench:updates${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const startedAt = new Date();
  const loadBefore = loadAverage();
  log(`mnemo bench:updates: ${command}\n${machineLine(machine)}`);
  const facts = SUBJECTS.reduce((n, s) => n + s.facts.length, 0);
  const byCount = [2, 3, 4].map((c) => `${SUBJECTS.filter((s) => s.facts.length === c).length} with ${c}`).join(', ');

  const runs: EmbedderRunResult[] = [];
  for (const embedder of o.embedders) runs.push(await evaluate(embedder, o.via));
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const loadAfter = loadAverage();
  const broken = runs.flatMap(violations);
  const preflightFailed = runs.some((r) => r.preflight.some((c) => c.ok === false));

  const surfaces = o.via === 'http'
    ? `the real server on loopback (\`dist/app/main.js\`, fresh SQLite store per embedder, an enterprise key from \`mnemo keys create\`): ` +
      `writes through G1 \`POST ${G1_MEMORIES}\` (\`supersedes\` in the superseding arm), searches through G3 \`POST ${G3_HYBRID}\` (hybrid, the MCP default kind) ` +
      `and \`POST ${G3_SEMANTIC}\` (semantic), \`topK\` ${TOP}, every other field left to its default`
    : 'the core services in process (`--via core`, not HTTP: a development run), fresh SQLite store per embedder';
  const body = [
    `- Command: \`${command}\``,
    `- Date: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round(seconds)} s)`,
    `- Machine: ${machineLine(machine)}`,
    `- 1-minute load average: ${loadBefore.toFixed(1)} when the run started, ${loadAfter.toFixed(1)} when it ended (latencies only; the rates do not depend on it)`,
    `- Data: \`bench/updates/fixture.ts\`, written for this benchmark: ${SUBJECTS.length} subjects (people, projects, services, ` +
      `policies, a user's preferences) of 2–4 successive facts (${byCount}; ${facts} facts) and ${DISTRACTORS.length} distractors ` +
      '(the same attribute of another entity, another attribute of the same entity, unrelated notes).',
    '',
    `**Protocol.** Through ${surfaces}. Each arm writes the same ${facts + DISTRACTORS.length} memories into its own workspace, one at a ` +
      'time in real time: round r writes fact r of every subject and a quarter of the distractors, shuffled (seeded), so a subject\'s ' +
      'facts are a round apart. Arm **add-only**: facts are just added. Arm **supersede**: each new fact `supersedes` the previous one. ' +
      'Per subject, one paraphrased question (it names the subject, not the facts\' words) is asked twice per search kind: about now ' +
      '(the last fact answers), and with `as_of` halfway between the creation of fact k and fact k+1 (k seeded, any but the last; ' +
      'fact k answers). "Stale" = an older fact of the subject among the hits. Rates are over the subjects.',
    '',
    defaultsLine(runs[0]!.defaults, o.via),
    '',
    resultsTable(runs),
    '',
    `Questions about now: what came first (subjects, of ${SUBJECTS.length}):`,
    '',
    firstPlaceTable(runs),
    '',
    `Preflight (a two-fact chain in its own workspace, threshold 0):\n${preflightLines(runs)}`,
    '',
    broken.length === 0
      ? '**Checks.** With supersession, no stale fact at defaults (0 %), and `as_of` never returned a fact written after the moment asked for (either arm).'
      : `**Checks FAILED.**\n${broken.map((b) => `- ${b}`).join('\n')}`,
  ].join('\n');

  process.stdout.write(`## ${SECTION_TITLE}\n\n${body}\n`);
  if (o.json !== false) {
    const file = resolve(REPO_ROOT, o.json);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify({ command, startedAt, seconds, machine, via: o.via, violations: broken, runs }, null, 1)}\n`);
    log(`wrote per-question results to ${file}`);
  }
  if (o.write) {
    const file = resolve(REPO_ROOT, o.file);
    await updateSections(file, [{ id: SECTION_ID, title: SECTION_TITLE, body }]);
    log(`updated ${file}: section ${SECTION_ID}`);
  }
  if (broken.length > 0 || preflightFailed) {
    log(`\nbench:updates: ${broken.length} check(s) failed${preflightFailed ? ', and the preflight failed' : ''} (see above)`);
    process.exitCode = 1;
  }
}

const program = new Command('npm run bench:updates --')
  .description('Knowledge updates: current fact first, stale facts in the top 5 and as_of answers, with and without supersession, ' +
    'for hybrid and semantic search at the API defaults. Markdown results go to stdout; progress goes to stderr.')
  .addOption(new Option('--embedders <list>', 'embedders to run the server with: local (the default model), hashing (comma-separated)')
    .argParser(embedderList).default([...EMBEDDERS], 'local,hashing'))
  .addOption(new Option('--via <how>', 'http: the real server on loopback (what BENCHMARKS.md reports); core: the core services in process (development)')
    .choices(['http', 'core']).default('http'))
  .option('--json <path>', 'where the per-question results go (JSON)', DEFAULT_JSON)
  .option('--no-json', 'write no JSON file')
  .option('--write', 'also update the "Knowledge updates" section of BENCHMARKS.md (HTTP runs of both embedders only)', false)
  .option('--file <path>', 'the markdown file --write updates', 'BENCHMARKS.md')
  .showHelpAfterError()
  .addHelpText('after', [
    '',
    `Data: bench/updates/fixture.ts (${SUBJECTS.length} subjects, ${DISTRACTORS.length} distractors). Searches: ${KINDS.join(', ')}; arms: ${ARMS.join(', ')}.`,
    'Exit code 1 when the API breaks a promise: a superseded fact at defaults, an as_of answer holding a fact not yet',
    'written (or, with supersession, already replaced), or a failed preflight check of the validity fields.',
    '',
    'Examples:',
    '  npm run bench:updates -- --embedders hashing          quick run (seconds)',
    '  npm run bench:updates -- --write                      both embedders over HTTP; updates BENCHMARKS.md',
    '  npm run bench:updates -- --via core --embedders hashing   in process, while a surface lacks a field',
    '',
  ].join('\n'))
  .action(async (opts: Options) => {
    if (opts.write && (opts.via !== 'http' || opts.embedders.length !== EMBEDDERS.length)) {
      program.error('--write records reference numbers: run over HTTP with both embedders');
    }
    await run(opts, process.argv.slice(2));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  log(`\nbench:updates FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
