/**
 * bench:updates, the measurement: writes the fixture twice (arm `add-only`: every fact just added; arm `supersede`:
 * each new fact `supersedes` the one before it), then asks each subject's question about the present and, with
 * `as_of`, about a moment between two of its writes, by every search kind at the surface's defaults.
 */
import { createRng } from '../lib/prng.ts';
import { phase } from '../lib/progress.ts';
import type { Backend, SearchKind } from './backends.ts';
import { DISTRACTORS, SUBJECTS, type Subject } from './fixture.ts';

export type Arm = 'add-only' | 'supersede';
export const ARMS: readonly Arm[] = ['add-only', 'supersede'];
export const KINDS: readonly SearchKind[] = ['hybrid', 'semantic'];
/** Hits asked for; "stale in the top 5" looks at all of them. */
export const TOP = 5;
const SEED = 20261124;

/** What one memory of a run is: fact `index` of a subject, or distractor `index`. */
export type Label = { kind: 'fact'; subject: string; index: number } | { kind: 'distractor'; index: number };
export const labelText = (l: Label | undefined): string =>
  !l ? 'unknown' : l.kind === 'fact' ? `${l.subject}#${l.index + 1}` : `distractor#${l.index + 1}`;

interface Write { label: Label; title: string; content: string }

/**
 * The order of the writes, the same in both arms: round r writes fact r of every subject that has one and a quarter
 * of the distractors, shuffled together (seeded), so that a subject's facts are a round apart and the distractors
 * are spread over time.
 */
export function writeSchedule(subjects: readonly Subject[] = SUBJECTS): Write[][] {
  const rng = createRng(SEED);
  const rounds = Math.max(...subjects.map((s) => s.facts.length));
  const out: Write[][] = [];
  for (let r = 0; r < rounds; r++) {
    const items: Write[] = [
      ...subjects.filter((s) => s.facts.length > r).map((s) => ({ label: { kind: 'fact', subject: s.id, index: r } as Label, title: s.title, content: s.facts[r]! })),
      ...DISTRACTORS.flatMap((d, i) => (i % rounds === r ? [{ label: { kind: 'distractor', index: i } as Label, title: d.title, content: d.content }] : [])),
    ];
    for (let i = items.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    out.push(items);
  }
  return out;
}

/** The past fact each subject's as_of question asks for (seeded): any but the current one. */
export function pastIndexes(subjects: readonly Subject[] = SUBJECTS): Map<string, number> {
  const rng = createRng(SEED + 1);
  return new Map(subjects.map((s) => [s.id, rng.int(s.facts.length - 1)]));
}

export interface QuestionResult {
  subject: string;
  /** `current`: no as_of; `as_of`: the moment between fact `expected` and the next one. */
  when: 'current' | 'as_of';
  asOf?: string;
  /** Index of the fact that answers (the last one for `current`). */
  expected: number;
  /** The hits, labelled, best first. */
  top: string[];
  first: boolean;
  inTop: boolean;
  /** An older fact of the subject among the hits. */
  older: boolean;
  /** A newer fact of the subject among the hits (as_of only; never allowed: it was not written yet). */
  newer: boolean;
  /** What came first. */
  firstWas: FirstWas;
}

/**
 * The first hit: the expected fact, an older (or newer) fact of the subject, a distractor written to look like the
 * subject (fixture.ts `near`), any other memory, or nothing at all.
 */
export type FirstWas = 'expected' | 'older fact' | 'newer fact' | 'near-duplicate' | 'other memory' | 'no hit';
export const FIRST_WAS: readonly FirstWas[] = ['expected', 'older fact', 'newer fact', 'near-duplicate', 'other memory', 'no hit'];

function firstWas(subject: string, expected: number, first: Label | undefined, any: boolean): FirstWas {
  if (!any) return 'no hit';
  if (first?.kind === 'fact' && first.subject === subject) {
    return first.index === expected ? 'expected' : first.index < expected ? 'older fact' : 'newer fact';
  }
  if (first?.kind === 'distractor' && DISTRACTORS[first.index]?.near === subject) return 'near-duplicate';
  return 'other memory';
}

export interface KindSummary {
  questions: number;
  currentFirst: number;
  currentInTop: number;
  staleInTop: number;
  currentEmpty: number;
  asOfFirst: number;
  asOfOlderInTop: number;
  asOfNewerInTop: number;
  asOfEmpty: number;
  /** What came first, for the questions about now. */
  currentFirstWas: Record<FirstWas, number>;
}

export interface KindRun { kind: SearchKind; summary: KindSummary; results: QuestionResult[]; meanMs: number }
export interface ArmRun { arm: Arm; workspace: string; writeSeconds: number; memories: number; kinds: KindRun[] }

export interface EmbedderRunResult {
  embedder: string;
  modelId: string;
  via: Backend['via'];
  defaults: Backend['defaults'];
  preflight: Check[];
  arms: ArmRun[];
}

export interface Check { name: string; ok: boolean | null; detail: string }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Does the API honour the validity fields? A two-fact chain in its own workspace: supersession recorded and applied
 * to default searches, `as_of` and `include_expired` applied, by both kinds, at threshold 0 (everything seen).
 * `ok: null` when the check could not tell (e.g. the field is not shown on the wire).
 */
export async function preflight(b: Backend, workspace = 'updates-preflight'): Promise<Check[]> {
  const checks: Check[] = [];
  const add = (name: string, ok: boolean | null, detail: string) => checks.push({ name, ok, detail });
  const before = new Date(Date.now() - 60_000);
  let first;
  let second;
  try {
    first = await b.create(workspace, { title: 'Canary colour', content: 'The canary build colour is red.' });
    await sleep(20);
    second = await b.create(workspace, { title: 'Canary colour', content: 'The canary build colour changed to blue.', supersedes: [first.id] });
    add('create with supersedes accepted', true, `POST answered with ${second.id}`);
  } catch (err) {
    add('create with supersedes accepted', false, String(err instanceof Error ? err.message : err));
    return checks;
  }
  const old = await b.read(workspace, first.id).catch((err: unknown) => ({ error: String(err) }) as Record<string, unknown>);
  if ('superseded_by' in old) {
    add('old memory shows superseded_by', old.superseded_by === second.id, `superseded_by ${JSON.stringify(old.superseded_by)}, valid_until ${JSON.stringify(old.valid_until)}`);
  } else {
    add('old memory shows superseded_by', null, `not on the wire (fields: ${Object.keys(old).join(', ')})`);
  }
  const between = new Date((first.createdAt.getTime() + second.createdAt.getTime()) / 2);
  for (const kind of KINDS) {
    const q = 'What colour is the canary build?';
    const tryIds = async (o: Parameters<Backend['search']>[3]) => b.search(workspace, kind, q, o).catch((err: unknown) => err instanceof Error ? err : new Error(String(err)));
    const describe = (ids: string[] | Error) => (ids instanceof Error ? ids.message
      : `hits: ${ids.map((id) => (id === first.id ? 'old' : id === second.id ? 'new' : id)).join(', ') || 'none'}`);
    const now = await tryIds({ limit: 10, threshold: 0 });
    add(`${kind}: default search leaves the superseded memory out`, now instanceof Error ? false : !now.includes(first.id) && now.includes(second.id), describe(now));
    const past = await tryIds({ limit: 10, threshold: 0, asOf: between });
    add(`${kind}: as_of between the writes finds the old memory only`, past instanceof Error ? false : past.includes(first.id) && !past.includes(second.id), describe(past));
    const early = await tryIds({ limit: 10, threshold: 0, asOf: before });
    add(`${kind}: as_of before both writes finds neither`, early instanceof Error ? false : !early.includes(first.id) && !early.includes(second.id), describe(early));
    const all = await tryIds({ limit: 10, threshold: 0, includeExpired: true });
    add(`${kind}: include_expired finds both`, all instanceof Error ? false : all.includes(first.id) && all.includes(second.id), describe(all));
  }
  return checks;
}

const emptySummary = (): KindSummary => ({
  questions: 0, currentFirst: 0, currentInTop: 0, staleInTop: 0, currentEmpty: 0, asOfFirst: 0, asOfOlderInTop: 0, asOfNewerInTop: 0, asOfEmpty: 0,
  currentFirstWas: Object.fromEntries(FIRST_WAS.map((f) => [f, 0])) as Record<FirstWas, number>,
});

/** Writes the fixture into `workspace` (superseding or not), then asks every question by every kind. */
export async function runArm(b: Backend, arm: Arm, workspace: string, label: string): Promise<ArmRun> {
  const schedule = writeSchedule();
  const total = schedule.reduce((n, r) => n + r.length, 0);
  const ids = new Map<string, Label>();
  /** Per subject, its facts as written: id and creation time. */
  const written = new Map<string, { id: string; at: Date }[]>();
  const bar = phase(`${label}: ${arm}: write`, total, 'memories');
  const started = performance.now();
  for (const round of schedule) {
    for (const w of round) {
      const chain = w.label.kind === 'fact' ? (written.get(w.label.subject) ?? []) : [];
      const previous = chain[chain.length - 1];
      const supersedes = arm === 'supersede' && previous ? [previous.id] : undefined;
      const m = await b.create(workspace, { title: w.title, content: w.content, supersedes });
      ids.set(m.id, w.label);
      if (w.label.kind === 'fact') {
        if (previous && m.createdAt.getTime() - previous.at.getTime() < 2) {
          throw new Error(`${w.label.subject}: facts written ${m.createdAt.getTime() - previous.at.getTime()} ms apart; as_of needs a moment between them`);
        }
        chain.push({ id: m.id, at: m.createdAt });
        written.set(w.label.subject, chain);
      }
      bar.increment();
    }
  }
  const writeSeconds = (performance.now() - started) / 1000;
  bar.stop(`${total} memories in ${writeSeconds.toFixed(1)} s`);

  const past = pastIndexes();
  const kinds: KindRun[] = [];
  const searchBar = phase(`${label}: ${arm}: search`, SUBJECTS.length * 2 * KINDS.length, 'searches');
  for (const kind of KINDS) {
    const summary = emptySummary();
    const results: QuestionResult[] = [];
    let ms = 0;
    for (const s of SUBJECTS) {
      const chain = written.get(s.id)!;
      const asks: { when: QuestionResult['when']; expected: number; asOf?: Date }[] = [
        { when: 'current', expected: chain.length - 1 },
      ];
      const k = past.get(s.id)!;
      asks.push({ when: 'as_of', expected: k, asOf: new Date((chain[k]!.at.getTime() + chain[k + 1]!.at.getTime()) / 2) });
      for (const ask of asks) {
        const t0 = performance.now();
        const hits = await b.search(workspace, kind, s.question, { limit: TOP, asOf: ask.asOf });
        ms += performance.now() - t0;
        const labels = hits.map((id) => ids.get(id));
        const factIndexes = labels.flatMap((l) => (l?.kind === 'fact' && l.subject === s.id ? [l.index] : []));
        const r: QuestionResult = {
          subject: s.id, when: ask.when, expected: ask.expected, top: labels.map(labelText),
          first: hits[0] !== undefined && hits[0] === chain[ask.expected]!.id,
          inTop: factIndexes.includes(ask.expected),
          older: factIndexes.some((i) => i < ask.expected),
          newer: factIndexes.some((i) => i > ask.expected),
          firstWas: firstWas(s.id, ask.expected, labels[0], hits.length > 0),
          ...(ask.asOf ? { asOf: ask.asOf.toISOString() } : {}),
        };
        results.push(r);
        if (r.when === 'current') {
          summary.questions++;
          if (r.first) summary.currentFirst++;
          if (r.inTop) summary.currentInTop++;
          if (r.older) summary.staleInTop++;
          if (hits.length === 0) summary.currentEmpty++;
          summary.currentFirstWas[r.firstWas]++;
        } else {
          if (r.first) summary.asOfFirst++;
          if (r.older) summary.asOfOlderInTop++;
          if (r.newer) summary.asOfNewerInTop++;
          if (hits.length === 0) summary.asOfEmpty++;
        }
        searchBar.increment();
      }
    }
    kinds.push({ kind, summary, results, meanMs: ms / (SUBJECTS.length * 2) });
  }
  searchBar.stop();
  return { arm, workspace, writeSeconds, memories: total, kinds };
}

/** Broken promises of the API (each a line; empty: none): what must hold whatever the ranking. */
export function violations(run: EmbedderRunResult): string[] {
  const out: string[] = [];
  for (const a of run.arms) {
    for (const k of a.kinds) {
      const s = k.summary;
      if (s.asOfNewerInTop > 0) out.push(`${run.embedder} ${a.arm} ${k.kind}: as_of returned a fact written after the moment asked for, for ${s.asOfNewerInTop} subjects`);
      if (a.arm === 'supersede' && s.staleInTop > 0) out.push(`${run.embedder} ${a.arm} ${k.kind}: a superseded fact came back at defaults for ${s.staleInTop} of ${s.questions} subjects (must be 0)`);
      if (a.arm === 'supersede' && s.asOfOlderInTop > 0) out.push(`${run.embedder} ${a.arm} ${k.kind}: as_of returned a fact already superseded at that moment for ${s.asOfOlderInTop} subjects`);
    }
  }
  return out;
}
