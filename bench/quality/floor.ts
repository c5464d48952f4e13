/**
 * `npm run bench:floor`: hybrid search's relevance floor (src/core/search/relevance.ts) — what each floor keeps and
 * what it empties. Builds the real core in process (fresh temp SQLite store per embedder), stores the paraphrase set's
 * 60 memories (test/fixtures/paraphrase-set.json) and asks, by hybrid search with the surfaces' defaults (weights
 * 0.7/0.3, rerank true, limit 10) at each floor:
 * - the 60 paraphrased questions: is the right memory first (right-first rate), and is the answer empty;
 * - questions nothing stored answers: the set's own 30 (which chose the model's calibration) and the 60 of
 *   test/fixtures/unrelated-questions.json (written for this, tuned on by nothing): is the answer empty;
 * - 26 lookups by a word the memory holds (test/fixtures/keyword-lookups.json): is that memory first.
 * For comparison, at the same thresholds: semantic search (G1's), and a cut on hybrid's fused score (what `threshold`
 * meant before the relevance floor). With `--locomo`, LoCoMo (read at run time from outside the repository, CC BY-NC
 * 4.0) once: every answerable question of its conversations by hybrid search at a few floors.
 * Markdown goes to stdout, progress to stderr; `--help` lists options.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer, type Container } from '../../src/app/container.ts';
import { createEmbedder, warmUp } from '../../src/app/embedder.factory.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { ALL_PERMISSIONS, type Principal } from '../../src/core/api-keys/api-key.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { HYBRID_DEFAULT_THRESHOLD } from '../../src/core/search/relevance.ts';
import type { SearchContext, SearchOutcome } from '../../src/core/search/search.service.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { log, phase } from '../lib/progress.ts';
import { ingest, type EmbedderKind } from './evaluate.ts';
import { loadLocomo, type Conversation } from './locomo.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_LOCOMO = resolve(REPO_ROOT, '../shared/data/locomo10.json');
const EMBEDDERS: readonly EmbedderKind[] = ['local', 'hashing'];
const FLOORS = [0, 0.5, 0.55, 0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.72, 0.74, 0.76, 0.78, 0.8];
const LOCOMO_FLOORS = [0, 0.6, 0.65, 0.7, 0.75];
const LIMIT = 10;
const WEIGHTS = { semanticWeight: 0.7, keywordWeight: 0.3, rerank: true } as const;
export const SECTION_ID = 'floor';
export const SECTION_TITLE = "Hybrid's relevance floor (paraphrase set, LoCoMo)";

interface ParaphraseSet {
  pairs: { topic: string; title: string; content: string; question: string }[];
  unrelated: string[];
}
interface UnrelatedSet { general: string[]; howto: string[]; personal: string[] }
interface LookupSet { lookups: { query: string; title: string }[] }

const fixture = async <T>(name: string): Promise<T> =>
  JSON.parse(await readFile(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8')) as T;

/** Per question: the ids answered, best first, by each method at each floor (index into FLOORS). */
type Answers = string[][];

interface SetRun {
  embedder: EmbedderKind;
  modelId: string;
  /** Per floor: per question of each group, the ids answered. */
  hybrid: { pairs: Answers; setUnrelated: Answers; heldOut: Answers; lookups: Answers }[];
  semantic: { pairs: Answers; setUnrelated: Answers; heldOut: Answers; lookups: Answers }[];
  fusedCut: { pairs: Answers; setUnrelated: Answers; heldOut: Answers; lookups: Answers }[];
  /** The ids of the memories each pair's question and each lookup is about. */
  pairIds: string[];
  lookupIds: string[];
  heldOutKinds: (keyof UnrelatedSet)[];
}

const benchActor = (scope: Scope): Principal => ({
  keyId: 'bench', tenantId: scope.tenantId, userId: 'bench', tier: 'enterprise', mode: scope.mode, scopes: new Set(ALL_PERMISSIONS), expiresAt: null,
});

/**
 * The configured embedder, each query embedded once: a question is asked at every threshold, and the model would
 * embed the same text each time (writes and everything else go to the model as they are).
 */
function queriesEmbeddedOnce(inner: Embedder): Embedder {
  const memo = new Map<string, Float32Array>();
  return new Proxy(inner, {
    get(target, name) {
      if (name !== 'embed') {
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      const embed: Embedder['embed'] = async (texts, options) => {
        const text = texts[0];
        if (!options?.urgent || texts.length !== 1 || text === undefined) return target.embed(texts, options);
        const known = memo.get(text);
        if (known) return [known];
        const vectors = await target.embed(texts, options);
        if (vectors[0]) memo.set(text, vectors[0]);
        return vectors;
      };
      return embed;
    },
  });
}

async function withContainer<T>(embedder: EmbedderKind, work: (c: Container, scopeOf: (workspace: string) => Scope) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-floor-'));
  const config = loadConfig({ MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: embedder, MNEMO_LOG_LEVEL: 'silent' });
  const container = await createContainer(config, { embedder: queriesEmbeddedOnce(createEmbedder(config.embeddings)) });
  try {
    await warmUp(container.embedder);
    const { key } = await container.apiKeys.create({ tenantId: 'floor', userId: 'bench', tier: 'enterprise', mode: 'live' });
    const p = await container.apiKeys.authenticate(key);
    return await work(container, (workspace) => ({ tenantId: p.tenantId, mode: p.mode, workspace }));
  } finally {
    await container.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const idsOf = (o: SearchOutcome): string[] => o.hits.map((h) => h.memory.id);

async function paraphraseRun(embedder: EmbedderKind): Promise<SetRun> {
  const set = await fixture<ParaphraseSet>('paraphrase-set.json');
  const unrelated = await fixture<UnrelatedSet>('unrelated-questions.json');
  const { lookups } = await fixture<LookupSet>('keyword-lookups.json');
  const heldOutKinds = (['general', 'howto', 'personal'] as const).flatMap((k) => unrelated[k].map(() => k));
  const heldOut = (['general', 'howto', 'personal'] as const).flatMap((k) => unrelated[k]);
  return withContainer(embedder, async (container, scopeOf) => {
    const scope = scopeOf('default');
    const pairIds: string[] = [];
    for (const p of set.pairs) pairIds.push((await container.memories.create(scope, benchActor(scope), { title: p.title, content: p.content })).id);
    const byTitle = new Map(set.pairs.map((p, i) => [p.title, pairIds[i]!]));
    const lookupIds = lookups.map((l) => {
      const id = byTitle.get(l.title);
      if (!id) throw new Error(`keyword-lookups.json: no memory titled ${l.title}`);
      return id;
    });
    const ctx: SearchContext = { scope, userId: 'bench', surface: 'bench' };
    const groups = { pairs: set.pairs.map((p) => p.question), setUnrelated: set.unrelated, heldOut, lookups: lookups.map((l) => l.query) };
    const total = Object.values(groups).reduce((n, g) => n + g.length, 0);
    const bar = phase(`${embedder}: paraphrase set`, total * (2 * FLOORS.length + 1), 'searches');
    const empty = () => ({ pairs: [] as Answers, setUnrelated: [] as Answers, heldOut: [] as Answers, lookups: [] as Answers });
    const run: Pick<SetRun, 'hybrid' | 'semantic' | 'fusedCut'> = {
      hybrid: FLOORS.map(empty), semantic: FLOORS.map(empty), fusedCut: FLOORS.map(empty),
    };
    for (const [group, questions] of Object.entries(groups) as [keyof typeof groups, string[]][]) {
      for (const query of questions) {
        const common = { query, limit: LIMIT, filter: {} };
        // The fused score's own cut (threshold's meaning before the floor): hybrid without a floor, then score >= t.
        const unfloored = await container.search.hybrid(ctx, { ...common, ...WEIGHTS, threshold: 0 });
        bar.increment();
        for (const [f, floor] of FLOORS.entries()) {
          run.hybrid[f]![group].push(idsOf(await container.search.hybrid(ctx, { ...common, ...WEIGHTS, threshold: floor })));
          run.semantic[f]![group].push(idsOf(await container.search.semantic(ctx, { ...common, threshold: floor })));
          run.fusedCut[f]![group].push(unfloored.hits.filter((h) => h.score >= floor).map((h) => h.memory.id));
          bar.increment(2);
        }
      }
    }
    bar.stop();
    return { embedder, modelId: container.embedder.modelId, ...run, pairIds, lookupIds, heldOutKinds };
  });
}

interface LocomoRun {
  modelId: string;
  conversations: number;
  turns: number;
  questions: number;
  ingestSeconds: number;
  /** Per floor: mean Recall@10, evidence first, empty answers (shares), for hybrid and semantic search. */
  rows: { floor: number; method: 'hybrid' | 'semantic'; recall10: number; first: number; empty: number }[];
}

async function locomoRun(file: string, limitConversations: number | undefined): Promise<LocomoRun> {
  const all = await loadLocomo(file);
  const conversations: Conversation[] = all.slice(0, limitConversations ?? all.length);
  return withContainer('local', async (container, scopeOf) => {
    const scopeOfConversation = (c: Conversation) => scopeOf(c.sampleId);
    const ingestSeconds = await ingest(container, scopeOfConversation, conversations, 64, 'local');
    const questions = conversations.flatMap((c) => c.questions.filter((q) => q.evidence.length > 0).map((q) => ({ c, q })));
    const bar = phase('local: LoCoMo floors', questions.length * LOCOMO_FLOORS.length * 2, 'searches');
    const sums = new Map<string, { recall10: number; first: number; empty: number }>();
    for (const { c, q } of questions) {
      const ctx: SearchContext = { scope: scopeOfConversation(c), userId: 'bench', surface: 'bench' };
      const evidence = new Set(q.evidence);
      for (const floor of LOCOMO_FLOORS) {
        for (const method of ['hybrid', 'semantic'] as const) {
          const common = { query: q.question, limit: LIMIT, filter: {}, threshold: floor };
          const out = method === 'hybrid' ? await container.search.hybrid(ctx, { ...common, ...WEIGHTS }) : await container.search.semantic(ctx, common);
          const dia = out.hits.map((h) => String(h.memory.metadata.dia_id ?? ''));
          const key = `${method}@${floor}`;
          const s = sums.get(key) ?? { recall10: 0, first: 0, empty: 0 };
          s.recall10 += new Set(dia.filter((d) => evidence.has(d))).size / evidence.size;
          s.first += dia.length > 0 && evidence.has(dia[0]!) ? 1 : 0;
          s.empty += dia.length === 0 ? 1 : 0;
          sums.set(key, s);
          bar.increment();
        }
      }
    }
    bar.stop();
    const n = questions.length;
    const rows = LOCOMO_FLOORS.flatMap((floor) => (['hybrid', 'semantic'] as const).map((method) => {
      const s = sums.get(`${method}@${floor}`)!;
      return { floor, method, recall10: s.recall10 / n, first: s.first / n, empty: s.empty / n };
    }));
    return {
      modelId: container.embedder.modelId, conversations: conversations.length,
      turns: conversations.reduce((t, c) => t + c.turns.length, 0), questions: n, ingestSeconds, rows,
    };
  });
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}`;
const share = (answers: Answers, ok: (ids: string[], i: number) => boolean): number =>
  answers.length === 0 ? 0 : answers.filter(ok).length / answers.length;
const rightFirst = (answers: Answers, ids: readonly string[]) => share(answers, (a, i) => a[0] === ids[i]);
const emptyShare = (answers: Answers) => share(answers, (a) => a.length === 0);

function setTables(r: SetRun): string[] {
  const base = rightFirst(r.hybrid[0]!.pairs, r.pairIds);
  const lines = [
    `**${r.embedder}** (\`${r.modelId}\`). Hybrid right-first rate without a floor: **${pct(base)} %**. Per threshold: ` +
      'right first = the right memory first among the 60 paraphrased questions (in parentheses: share of the rate at ' +
      'threshold 0); no answer = paraphrased questions answered with nothing; unrelated empty = questions nothing ' +
      'answers that get an empty answer (the set\'s 30 / the held-out 60); lookups = lookups by a word the memory ' +
      'holds with that memory first (of 26).',
    '',
    '| threshold | hybrid: right first | hybrid: no answer | hybrid: unrelated empty (30 / 60) | hybrid: lookups | semantic: right first | semantic: no answer | semantic: unrelated empty (30 / 60) | fused-score cut: right first | fused-score cut: unrelated empty (30 / 60) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [f, floor] of FLOORS.entries()) {
    const h = r.hybrid[f]!;
    const s = r.semantic[f]!;
    const x = r.fusedCut[f]!;
    const first = rightFirst(h.pairs, r.pairIds);
    const mark = floor === HYBRID_DEFAULT_THRESHOLD ? '**' : '';
    lines.push(`| ${mark}${floor.toFixed(2)}${mark} | ${pct(first)} % (${base > 0 ? Math.round((100 * first) / base) : 0} %) | ` +
      `${pct(emptyShare(h.pairs))} % | ${pct(emptyShare(h.setUnrelated))} / ${pct(emptyShare(h.heldOut))} % | ` +
      `${Math.round(26 * rightFirst(h.lookups, r.lookupIds))} | ${pct(rightFirst(s.pairs, r.pairIds))} % | ${pct(emptyShare(s.pairs))} % | ` +
      `${pct(emptyShare(s.setUnrelated))} / ${pct(emptyShare(s.heldOut))} % | ${pct(rightFirst(x.pairs, r.pairIds))} % | ` +
      `${pct(emptyShare(x.setUnrelated))} / ${pct(emptyShare(x.heldOut))} % |`);
  }
  const d = r.hybrid[FLOORS.indexOf(HYBRID_DEFAULT_THRESHOLD)]!;
  const byKind = (['general', 'howto', 'personal'] as const).map((k) => {
    const of = d.heldOut.filter((_, i) => r.heldOutKinds[i] === k);
    return `${k} ${pct(emptyShare(of))} % (of ${of.length})`;
  });
  lines.push('', `Held-out unrelated questions answered empty by hybrid at the default ${HYBRID_DEFAULT_THRESHOLD}, by kind: ${byKind.join(', ')}.`);
  return lines;
}

function locomoTable(l: LocomoRun): string[] {
  const base = l.rows.find((r) => r.floor === 0 && r.method === 'hybrid')!;
  return [
    `**LoCoMo**, local (\`${l.modelId}\`): ${l.conversations} conversations, ${l.turns} turns (one memory each, as in ` +
      `"Search quality (LoCoMo)"; ingest ${Math.round(l.ingestSeconds)} s), ${l.questions} answerable questions (categories 1–4), limit ${LIMIT}. ` +
      'Every question has an answer, so a floor can only lose: evidence first = an evidence turn first; no answer = ' +
      'empty answers.',
    '',
    '| threshold | hybrid Recall@10 | hybrid evidence first | hybrid no answer | semantic Recall@10 | semantic evidence first | semantic no answer |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...LOCOMO_FLOORS.map((floor) => {
      const h = l.rows.find((r) => r.floor === floor && r.method === 'hybrid')!;
      const s = l.rows.find((r) => r.floor === floor && r.method === 'semantic')!;
      const mark = floor === HYBRID_DEFAULT_THRESHOLD ? '**' : '';
      return `| ${mark}${floor.toFixed(2)}${mark} | ${pct(h.recall10)} % (${Math.round((100 * h.recall10) / base.recall10)} %) | ` +
        `${pct(h.first)} % | ${pct(h.empty)} % | ${pct(s.recall10)} % | ${pct(s.first)} % | ${pct(s.empty)} % |`;
    }),
  ];
}

interface FloorOptions {
  embedders: EmbedderKind[];
  locomo: boolean;
  data: string;
  limitConversations: number | undefined;
  write: boolean;
  file: string;
}

async function main(o: FloorOptions, argv: string[]): Promise<void> {
  const machine = describeMachine();
  const command = `npm run bench:floor${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const startedAt = new Date();
  log(`mnemo bench:floor: ${command}\n${machineLine(machine)}`);
  if (o.locomo && !existsSync(o.data)) throw new Error(`LoCoMo not found at ${o.data} (give its path with --data)`);
  const runs: SetRun[] = [];
  for (const e of o.embedders) runs.push(await paraphraseRun(e));
  const locomo = o.locomo ? await locomoRun(o.data, o.limitConversations) : null;
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const body = [
    `- Command: \`${command}\``,
    `- Date: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round(seconds)} s)`,
    `- Machine: ${machineLine(machine)}`,
    '- Data: `test/fixtures/paraphrase-set.json` (60 memories, a paraphrased question each, 30 unrelated questions), ' +
      '`test/fixtures/unrelated-questions.json` (60 held-out unrelated questions: 20 general knowledge, 15 how-to, 25 ' +
      'personal or work questions on topics the memories do not cover) and `test/fixtures/keyword-lookups.json` (26 ' +
      'lookups by a word the memory holds)' + (locomo ? '; LoCoMo (CC BY-NC 4.0, read at run time from outside the repository, never copied)' : '') + '.',
    `- Protocol: the real core in process, a fresh temp SQLite store per embedder; hybrid search with the surfaces' ` +
      `defaults (weights ${WEIGHTS.semanticWeight}/${WEIGHTS.keywordWeight}, rerank true, limit ${LIMIT}) at each threshold (the ` +
      'relevance floor); semantic search at the same thresholds; and the fused-score cut: hybrid without a floor, ' +
      'keeping hits whose fused score is at or above the threshold (what the hybrid threshold meant before). Each ' +
      'question is embedded once and its vector reused at every threshold.',
    '',
    ...runs.flatMap((r) => [...setTables(r), '']),
    ...(locomo ? locomoTable(locomo) : []),
  ].join('\n');
  process.stdout.write(`## ${SECTION_TITLE}\n\n${body}\n`);
  if (o.write) {
    const file = resolve(REPO_ROOT, o.file);
    await updateSections(file, [{ id: SECTION_ID, title: SECTION_TITLE, body }]);
    log(`updated ${file}: section ${SECTION_ID}`);
  }
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

const program = new Command('npm run bench:floor --')
  .description("Hybrid search's relevance floor: right-first rate, unrelated questions answered empty and lookups kept, per threshold.\n" +
    'Markdown results go to stdout; progress goes to stderr.')
  .addOption(new Option('--embedders <list>', 'embedders for the paraphrase set: local, hashing (comma-separated)')
    .argParser(embedderList).default([...EMBEDDERS], 'local,hashing'))
  .option('--locomo', 'also LoCoMo, with the local model (ingesting it takes 10-15 minutes on 2 cores)', false)
  .option('--data <path>', 'locomo10.json (CC BY-NC 4.0; read in place, never copied)', DEFAULT_LOCOMO)
  .addOption(new Option('--limit-conversations <n>', 'LoCoMo: only the first n conversations (quick run)').argParser(positive))
  .option('--write', `also update the "${SECTION_TITLE}" section of BENCHMARKS.md`, false)
  .option('--file <path>', 'the markdown file --write updates', 'BENCHMARKS.md')
  .showHelpAfterError()
  .addHelpText('after', [
    '',
    'Examples:',
    '  npm run bench:floor                          paraphrase set, local and hashing (about a minute)',
    '  npm run bench:floor -- --locomo --write      and LoCoMo once; updates BENCHMARKS.md',
    '',
  ].join('\n'))
  .action(async (opts: FloorOptions) => {
    if (opts.write && opts.limitConversations !== undefined) {
      program.error('--write records reference numbers; a --limit-conversations run must not overwrite them');
    }
    await main(opts, process.argv.slice(2));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  log(`\nbench:floor FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
