import { readFile } from 'node:fs/promises';
import type { IngestRequestMessage } from '../../src/core/ingestion/ingestion.rules.ts';
import { loadLocomo, type Conversation, type Question, type Turn } from '../quality/locomo.ts';

/**
 * LoCoMo (CC BY-NC 4.0, evaluation only; read at run time, never copied) as ingestion requests: one request per
 * session, its messages in the session's order, each message's position mapped back to the turn's dia_id.
 *
 * Speakers → roles. LoCoMo's conversations are between two people (`speaker_a`, `speaker_b`); an ingestion request
 * has roles. The default maps `speaker_a` to `user` and `speaker_b` to `assistant` (the roles a chat has), and every
 * message's content starts with its speaker's name (`Caroline: …`), so the model can name who said what — questions
 * ask about both people. The extraction prompt asks for what "the user" will want remembered, which may favour
 * speaker_a's facts: the report splits evidence recall by role, and `--roles` swaps or flattens the mapping to
 * measure that bias.
 */
export type RoleMapping = 'a-user' | 'b-user' | 'all-user';
export const ROLE_MAPPINGS: readonly RoleMapping[] = ['a-user', 'b-user', 'all-user'];

export interface SessionRequest {
  session: number;
  date: string;
  /** Null when the session's date_time could not be read (messages then carry no timestamp). */
  at: Date | null;
  messages: IngestRequestMessage[];
  /** dia_id of each message, by position (proposal.sources index this). */
  diaIds: string[];
}

export interface IngestConversation {
  sampleId: string;
  speakers: { a: string; b: string };
  sessions: SessionRequest[];
  questions: Question[];
  /** The turns of the sessions kept (all of them without --sessions). */
  turns: Turn[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/**
 * A session's date_time as LoCoMo writes it, "1:56 pm on 8 May, 2023", read as UTC (the data names no time zone);
 * null for anything else.
 */
export function sessionTime(text: string): Date | null {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  const hour12 = Number(m[1]);
  if (month < 0 || hour12 < 1 || hour12 > 12) return null;
  const hour = (hour12 % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  const at = new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
  return at.getUTCDate() === Number(m[4]) ? at : null;
}

export function roleOf(speaker: string, speakers: { a: string; b: string }, mapping: RoleMapping): 'user' | 'assistant' {
  if (mapping === 'all-user') return 'user';
  const isA = speaker === speakers.a;
  return (mapping === 'a-user') === isA ? 'user' : 'assistant';
}

/** What one turn says, as the message content (the image caption as bench:quality writes it). */
export const turnContent = (t: Turn): string => `${t.speaker}: ${t.text}${t.caption ? ` [image: ${t.caption}]` : ''}`;

export async function loadSessions(file: string, o: { conversations?: number | undefined; sessions?: number | undefined; roles: RoleMapping }):
  Promise<IngestConversation[]> {
  const all: Conversation[] = await loadLocomo(file);
  // loadLocomo keeps turns and questions; the two speakers' names are read here, from the same file.
  const raw = JSON.parse(await readFile(file, 'utf8')) as { sample_id: string; conversation: { speaker_a?: string; speaker_b?: string } }[];
  const speakersOf = new Map(raw.map((s) => [s.sample_id, { a: String(s.conversation.speaker_a ?? ''), b: String(s.conversation.speaker_b ?? '') }]));
  return all.slice(0, o.conversations ?? all.length).map((c) => {
    const speakers = speakersOf.get(c.sampleId) ?? { a: '', b: '' };
    const numbers = [...new Set(c.turns.map((t) => t.session))].sort((x, y) => x - y).slice(0, o.sessions ?? Infinity);
    const sessions = numbers.map((n): SessionRequest => {
      const turns = c.turns.filter((t) => t.session === n);
      const date = turns[0]?.sessionDate ?? '';
      const at = sessionTime(date);
      return {
        session: n, date, at, diaIds: turns.map((t) => t.diaId),
        messages: turns.map((t) => ({ role: roleOf(t.speaker, speakers, o.roles), content: turnContent(t), timestamp: at })),
      };
    });
    const kept = new Set(numbers);
    return { sampleId: c.sampleId, speakers, sessions, questions: c.questions, turns: c.turns.filter((t) => kept.has(t.session)) };
  });
}
