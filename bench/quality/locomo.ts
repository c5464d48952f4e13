import { readFile } from 'node:fs/promises';

/**
 * Reading LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0, evaluation only). The file is read from its path at run
 * time and never copied into the repository: nothing here embeds any of its content.
 */
export interface Turn {
  diaId: string;
  speaker: string;
  text: string;
  caption: string | undefined;
  session: number;
  sessionDate: string;
}

export interface Question {
  question: string;
  category: number;
  /** Evidence dia_ids that exist as turns of the conversation (deduplicated). */
  evidence: string[];
  /** Evidence entries as written in the file that name no turn (malformed or missing ids). */
  droppedEvidence: number;
}

export interface Conversation {
  sampleId: string;
  turns: Turn[];
  questions: Question[];
}

/** Categories 1–4 are answerable from the conversation; 5 is adversarial (no answer exists) and is skipped. */
export const ANSWERABLE_CATEGORIES = [1, 2, 3, 4] as const;

/**
 * The usual reading of the numeric categories (the file itself carries numbers only). These labels follow the
 * LoCoMo repository's evaluation code and the papers that report per-category results on it.
 */
export const CATEGORY_LABELS: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};

interface RawTurn { speaker: string; dia_id: string; text: string; blip_caption?: string }
interface RawQa { question: string; answer?: unknown; evidence?: unknown[]; category: number }
interface RawSample { sample_id: string; conversation: Record<string, unknown>; qa: RawQa[] }

/**
 * A few evidence entries pack several ids into one string ("D8:6; D9:17", "D9:1 D4:4"); they are split on `;`,
 * `,` and white space. Ids that still name no turn are dropped and counted.
 */
function evidenceIds(raw: unknown[] | undefined): string[] {
  return (raw ?? []).flatMap((e) => String(e).split(/[;,\s]+/)).filter((s) => s.length > 0);
}

export async function loadLocomo(file: string): Promise<Conversation[]> {
  const raw = JSON.parse(await readFile(file, 'utf8')) as RawSample[];
  if (!Array.isArray(raw)) throw new Error(`${file}: expected an array of samples`);
  return raw.map((sample) => {
    const c = sample.conversation;
    const turns: Turn[] = [];
    const sessions = Object.keys(c)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const n of sessions) {
      const sessionDate = String(c[`session_${n}_date_time`] ?? '');
      for (const t of (c[`session_${n}`] as RawTurn[] | undefined) ?? []) {
        turns.push({
          diaId: t.dia_id, speaker: t.speaker, text: t.text, caption: t.blip_caption || undefined, session: n, sessionDate,
        });
      }
    }
    const known = new Set(turns.map((t) => t.diaId));
    const questions: Question[] = sample.qa
      .filter((qa) => (ANSWERABLE_CATEGORIES as readonly number[]).includes(qa.category))
      .map((qa) => {
        const ids = evidenceIds(qa.evidence);
        const evidence = [...new Set(ids.filter((id) => known.has(id)))];
        return { question: qa.question, category: qa.category, evidence, droppedEvidence: ids.filter((id) => !known.has(id)).length };
      });
    return { sampleId: sample.sample_id, turns, questions };
  });
}
