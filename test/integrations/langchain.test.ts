import type { AddressInfo } from 'node:net';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { Document } from '@langchain/core/documents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMnemoClient } from 'mnemo/client';
import { MnemoChatMessageHistory, MnemoRetriever, sessionTag } from 'mnemo/integrations/langchain';
import { run as runExample } from '../../integrations/langchain/example.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** The LangChain.js integration with the real @langchain/core against a real server on loopback. */
describe('mnemo/integrations/langchain', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  it('retriever.invoke returns the stored memories as Documents, best first (hybrid and semantic)', async () => {
    const client = createMnemoClient({ baseUrl, apiKey: await t.freshTenant() });
    const deploy = (await client.memories.create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays', metadata: { team: 'ops' } })).data;
    await client.memories.create({ title: 'Lunch', content: 'The team eats at noon' });
    for (const mode of ['hybrid', 'semantic'] as const) {
      const documents = await new MnemoRetriever({ client, k: 2, mode, threshold: 0 }).invoke('deploy blue green Fridays');
      expect(documents[0]).toBeInstanceOf(Document);
      expect(documents[0]).toMatchObject({
        id: deploy.id, pageContent: 'We deploy with blue/green on Fridays',
        metadata: { id: deploy.id, title: 'Deploys', team: 'ops', score: expect.any(Number) },
      });
      expect(documents.length).toBeLessThanOrEqual(2);
    }
  });

  it('keeps a session in order across two history objects, and clear() empties it (and only it)', async () => {
    const client = createMnemoClient({ baseUrl, apiKey: await t.freshTenant() });
    const writer = new MnemoChatMessageHistory({ client, sessionId: 'session-a' });
    await writer.addMessages([new SystemMessage('Be brief.'), new HumanMessage('Hi'), new AIMessage('Hello!')]);
    await writer.addUserMessage('Where is the office?');
    await writer.addAIMessage('In York.');
    const other = new MnemoChatMessageHistory({ client, sessionId: 'session-b' });
    await other.addUserMessage('Another conversation');

    const reader = new MnemoChatMessageHistory({ client, sessionId: 'session-a' });
    const messages = await reader.getMessages();
    expect(messages.map((m) => [m.type, m.text])).toEqual([
      ['system', 'Be brief.'], ['human', 'Hi'], ['ai', 'Hello!'], ['human', 'Where is the office?'], ['ai', 'In York.'],
    ]);
    // Each message is an ordinary memory of the session's tag, searchable like any other.
    expect((await client.memories.list({ tags: sessionTag('session-a') })).pagination.total).toBe(5);

    expect(() => new MnemoChatMessageHistory({ client, sessionId: 'a,b' })).toThrow(/without a comma/);

    await reader.clear();
    expect(await writer.getMessages()).toEqual([]);
    expect((await other.getMessages()).map((m) => m.text)).toEqual(['Another conversation']);
  });

  it('runs integrations/langchain/example.ts', async () => {
    const { documents, messages } = await runExample({ baseUrl, apiKey: await t.freshTenant() });
    expect(documents[0]?.pageContent).toBe('We deploy with blue/green on Fridays');
    expect(messages.map((m) => m.text)).toEqual(['When do we deploy?', 'On Fridays, blue/green.']);
  });
});
