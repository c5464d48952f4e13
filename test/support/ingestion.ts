import type { FastifyInstance } from 'fastify';
import { startMockLlm, type MockLlm, type MockLlmOptions, type MockLlmRequest } from './mock-llm-server.ts';
import { createTestApp, type TestApp } from './test-app.ts';

/**
 * Ingestion in tests (docs/ingestion.md). app.inject never runs start.ts, so no worker runs by itself:
 * `runIngestions(t)` runs every queued job to its end, as a node's worker would. `createIngestTestApp` builds the
 * test app with a chat model: MNEMO_LLM_URL at a loopback mock (mock-llm-server.ts) whose script a test sets.
 */
export const runIngestions = (t: Pick<TestApp, 'container'>): Promise<number> => t.container.ingestionWorker.drain();

export interface IngestTestApp extends TestApp {
  llm: MockLlm;
}

/** The model name the test app is configured with (MNEMO_LLM_MODEL). */
export const TEST_LLM_MODEL = 'mock-extractor';

/** A test app whose `extract` mode calls a mock LLM; `close` closes both. */
export async function createIngestTestApp(
  options: { llm?: MockLlmOptions; env?: Record<string, string> } = {},
): Promise<IngestTestApp> {
  const llm = await startMockLlm(options.llm);
  try {
    const t = await createTestApp({ env: { MNEMO_LLM_URL: llm.url, MNEMO_LLM_MODEL: TEST_LLM_MODEL, ...options.env } });
    const closeApp = t.close.bind(t);
    return Object.assign(t, {
      llm,
      close: async () => {
        await closeApp();
        await llm.close();
      },
    });
  } catch (err) {
    await llm.close();
    throw err;
  }
}

/** Which of ingestion's prompts a mock request is (prompts.ts): the facts of a conversation, or one fact's decision. */
export const isDecision = (req: MockLlmRequest): boolean => req.prompt.includes('New fact:');
export const isExtraction = (req: MockLlmRequest): boolean => req.prompt.includes('Conversation:');
/** A repair turn: the model's answer was refused and it is asked again (prompts.ts, repairTurn). */
export const isRepair = (req: MockLlmRequest): boolean => req.prompt.includes('That answer was not valid');

/** The ids of the existing memories a decision request showed the model. */
export const candidateIds = (req: MockLlmRequest): string[] =>
  [...req.prompt.matchAll(/- id: (\S+) \(valid from/g)].map((m) => m[1]!);

/** The G1 ingestion routes for one key. */
export function ingestApi(app: FastifyInstance, key: string, headers: Record<string, string> = {}) {
  const h = { 'x-api-key': key, ...headers };
  return {
    start: (body: object) => app.inject({ method: 'POST', url: '/api/v1/memories/ingest', headers: h, payload: body }),
    get: (id: string, query = '') => app.inject({ method: 'GET', url: `/api/v1/memories/ingest/${encodeURIComponent(id)}${query}`, headers: h }),
    list: (query = '') => app.inject({ method: 'GET', url: `/api/v1/memories/ingest${query}`, headers: h }),
    review: (id: string, body: object) => app.inject({ method: 'POST', url: `/api/v1/memories/ingest/${encodeURIComponent(id)}/review`, headers: h, payload: body }),
  };
}
