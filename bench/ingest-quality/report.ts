import { table } from '../lib/markdown.ts';
import { ANSWERABLE_CATEGORIES, CATEGORY_LABELS } from '../quality/locomo.ts';
import type { ConversationResult, JobResult, QuestionResult, Run } from './evaluate.ts';

const pct = (n: number, of: number) => (of === 0 ? 'n/a' : `${(100 * n / of).toFixed(1)} %`);
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const sum = <T>(items: readonly T[], f: (x: T) => number) => items.reduce((s, x) => s + f(x), 0);

/** Mean per-question recall: the share of a question's evidence turns among the top hits' source turns. */
export function meanRecall(questions: readonly QuestionResult[]): number {
  return questions.length === 0 ? Number.NaN : sum(questions, (q) => q.found.length / q.evidence.length) / questions.length;
}
const share = (v: number) => (Number.isFinite(v) ? `${(100 * v).toFixed(1)} %` : 'n/a');

interface Totals {
  sessions: number;
  turns: number;
  jobs: JobResult[];
  evidence: number;
  covered: number;
  questions: QuestionResult[];
  seconds: number;
}

function totals(cs: readonly ConversationResult[]): Totals {
  return {
    sessions: sum(cs, (c) => c.sessions), turns: sum(cs, (c) => c.turns), jobs: cs.flatMap((c) => c.jobs),
    evidence: sum(cs, (c) => c.evidenceTurns.length), covered: sum(cs, (c) => c.coveredTurns.length),
    questions: cs.flatMap((c) => c.questions), seconds: sum(cs, (c) => c.ingestSeconds),
  };
}

function row(name: string, t: Totals): string[] {
  const failed = t.jobs.filter((j) => j.error).length;
  const proposals = (a: 'add' | 'supersede' | 'skip') => sum(t.jobs, (j) => j.proposals[a]);
  const hit = t.questions.filter((q) => q.found.length > 0).length;
  return [
    name, String(t.sessions), String(t.turns), `${failed}/${t.jobs.length}`,
    `${proposals('add')} / ${proposals('supersede')} / ${proposals('skip')}`, String(sum(t.jobs, (j) => j.written)),
    int(sum(t.jobs, (j) => j.usage.modelCalls)),
    `${int(sum(t.jobs, (j) => j.usage.promptTokens))} / ${int(sum(t.jobs, (j) => j.usage.completionTokens))}`,
    `${pct(t.covered, t.evidence)} (${t.covered}/${t.evidence})`, share(meanRecall(t.questions)), pct(hit, t.questions.length),
    t.seconds.toFixed(1),
  ];
}

export function conversationTable(run: Run): string {
  const rows = run.conversations.map((c) => row(c.sampleId, totals([c])));
  if (run.conversations.length > 1) rows.push(row('**all**', totals(run.conversations)));
  return table(['conversation', 'sessions', 'turns', 'jobs failed', 'proposals add / supersede / skip', 'memories written',
    'model calls', 'prompt / completion tokens', 'evidence recall', `retrieval Recall@10`, 'questions with a hit@10', 'ingest s'],
  rows, 'lrrrrrrrrrrr');
}

export function categoryTable(run: Run): string {
  const rows = ANSWERABLE_CATEGORIES.map((cat) => {
    let evidence = 0;
    let covered = 0;
    for (const c of run.conversations) {
      const turns = new Set(c.questions.filter((q) => q.category === cat).flatMap((q) => q.evidence));
      const hit = new Set(c.coveredTurns);
      evidence += turns.size;
      covered += [...turns].filter((t) => hit.has(t)).length;
    }
    const qs = run.conversations.flatMap((c) => c.questions).filter((q) => q.category === cat);
    return [`${cat} ${CATEGORY_LABELS[cat]}`, String(qs.length), `${pct(covered, evidence)} (${covered}/${evidence})`, share(meanRecall(qs)),
      pct(qs.filter((q) => q.found.length > 0).length, qs.length)];
  });
  return table(['category', 'questions', 'evidence recall', 'retrieval Recall@10', 'questions with a hit@10'], rows, 'lrrrr');
}

export function detailLines(run: Run): string {
  const cs = run.conversations;
  const t = totals(cs);
  const calls = sum(t.jobs, (j) => j.usage.modelCalls);
  const user = { evidence: sum(cs, (c) => c.byRole.user.evidence), covered: sum(cs, (c) => c.byRole.user.covered) };
  const assistant = { evidence: sum(cs, (c) => c.byRole.assistant.evidence), covered: sum(cs, (c) => c.byRole.assistant.covered) };
  const viaSkip = sum(cs, (c) => c.coveredViaSkip.length);
  const written = sum(t.jobs, (j) => j.written);
  const lines = [
    `- Model calls: ${(calls / Math.max(1, cs.length)).toFixed(1)} per conversation, ${(calls / Math.max(1, t.jobs.length)).toFixed(1)} per session ` +
      `(${(sum(t.jobs, (j) => j.usage.promptTokens) / Math.max(1, t.jobs.length)).toFixed(0)} prompt and ` +
      `${(sum(t.jobs, (j) => j.usage.completionTokens) / Math.max(1, t.jobs.length)).toFixed(0)} completion tokens per session, as the server reported them).`,
    `- Evidence recall by the role the evidence turn's speaker was given (\`--roles ${run.roles}\`): user ${pct(user.covered, user.evidence)} ` +
      `(${user.covered}/${user.evidence}), assistant ${pct(assistant.covered, assistant.evidence)} (${assistant.covered}/${assistant.evidence}).`,
    `- ${viaSkip} covered evidence turns are credited only through a fact skipped as a duplicate of an earlier memory; ` +
      `${sum(cs, (c) => c.supersededAtEnd)} of the ${written} memories written were superseded by a later session (not searchable at the end).`,
  ];
  return lines.join('\n');
}

/** Failed jobs grouped by reason, with one message of each. */
export function failureLines(run: Run): string {
  const failed = run.conversations.flatMap((c) => c.jobs).filter((j) => j.error);
  if (failed.length === 0) return '- Jobs failed: none.';
  const byCode = new Map<string, JobResult[]>();
  for (const j of failed) byCode.set(j.error!.code, [...(byCode.get(j.error!.code) ?? []), j]);
  return [`- Jobs failed: ${failed.length} (a failed job writes nothing for its session):`,
    ...[...byCode].map(([code, jobs]) => {
      const where = jobs.slice(0, 5).map((j) => `${j.sampleId} s${j.session}`).join(', ') + (jobs.length > 5 ? ', …' : '');
      const message = jobs[0]!.error!.message.replace(/\s+/g, ' ').slice(0, 240);
      return `  - \`${code}\` × ${jobs.length} (${where}): ${message}`;
    })].join('\n');
}
