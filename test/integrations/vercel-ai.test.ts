import type { AddressInfo } from 'node:net';
import { generateText, stepCountIs, type ToolExecutionOptions } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMnemoClient, type MnemoClient } from 'mnemo/client';
import { mnemoTools } from 'mnemo/integrations/vercel-ai';
import { run as runExample } from '../../integrations/vercel-ai/example.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A scripted model: its first answer calls `toolName` with `input`, its second says `done` (the SDK's tool loop). */
function modelCalling(toolName: string, input: object) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
      },
      { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    ],
  });
}

/** The Vercel AI SDK tools with the real `ai` package against a real server on loopback. */
describe('mnemo/integrations/vercel-ai', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  const freshClient = async (): Promise<MnemoClient> => createMnemoClient({ baseUrl, apiKey: await t.freshTenant() });
  const callOptions = (toolCallId: string): ToolExecutionOptions => ({ toolCallId, messages: [] });

  it('remember, recall and forget, executed as the SDK executes them', async () => {
    const client = await freshClient();
    const tools = mnemoTools(client, { tags: ['user-7'], threshold: 0 });
    const stored = await tools.remember.execute!({ title: 'Coffee', content: 'Sam drinks oat flat whites', tags: ['prefs'] }, callOptions('a'));
    expect(stored).toMatchObject({ id: expect.any(String), title: 'Coffee' });
    const { id } = stored as { id: string };
    expect((await client.memories.get(id)).data.tags).toEqual(['user-7', 'prefs']);
    const recalled = await tools.recall.execute!({ query: 'oat flat whites' }, callOptions('b')) as { memories: { id: string }[] };
    expect(recalled.memories[0]?.id).toBe(id);
    expect(await tools.forget.execute!({ id }, callOptions('c'))).toEqual({ id, deleted: true });
    await expect(client.memories.get(id)).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' });
  });

  it('runs through generateText: a scripted model calls recall and gets the stored memory back', async () => {
    const client = await freshClient();
    const { data: memory } = await client.memories.create({ title: 'Office', content: 'The office is in York' });
    const model = modelCalling('recall', { query: 'office York' });
    const result = await generateText({ model, tools: mnemoTools(client, { threshold: 0 }), stopWhen: stepCountIs(3), prompt: 'Where is the office?' });
    expect(result.text).toBe('done');
    const toolResult = result.steps[0]!.toolResults[0]!;
    expect(toolResult).toMatchObject({ toolName: 'recall', output: { memories: [expect.objectContaining({ id: memory.id, content: 'The office is in York' })] } });
    // The SDK handed the tool's output back to the model on its second call.
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain('The office is in York');
  });

  it('runs integrations/vercel-ai/example.ts: the model stores a memory through remember', async () => {
    const client = await freshClient();
    const model = modelCalling('remember', { title: 'Office move', content: 'The office moves to York in March' });
    const result = await runExample({ baseUrl, apiKey: (await t.key()), model });
    expect(result.steps[0]!.toolResults[0]).toMatchObject({ toolName: 'remember', output: { title: 'Office move' } });
    const listed = await client.memories.list({ tags: 'assistant' });
    expect(listed.data.map((m) => m.content)).toEqual(['The office moves to York in March']);
  });

  it('returns a refusal to the model as a tool error (a read-only key cannot remember)', async () => {
    const client = createMnemoClient({ baseUrl, apiKey: await t.freshTenant({ scopes: ['memories:read'] }) });
    const model = modelCalling('remember', { title: 'Nope', content: 'Should not be stored' });
    const result = await generateText({ model, tools: mnemoTools(client), stopWhen: stepCountIs(3), prompt: 'Remember this' });
    const error = result.steps[0]!.content.find((part) => part.type === 'tool-error');
    expect(error).toMatchObject({ toolName: 'remember', error: expect.objectContaining({ name: 'MnemoError', code: 'PERMISSION_DENIED', status: 403 }) });
  });
});
