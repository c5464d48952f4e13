import { HumanMessage, AIMessage } from '@langchain/core/messages';
import { createMnemoClient } from 'mnemo/client';
import { MnemoChatMessageHistory, MnemoRetriever } from 'mnemo/integrations/langchain';

export async function run({ baseUrl, apiKey }: { baseUrl: string; apiKey: string }) {
  const client = createMnemoClient({ baseUrl, apiKey });
  await client.memories.create({ title: 'Deploys', content: 'We deploy with blue/green on Fridays', tags: ['ops'] });

  // Memories as LangChain Documents (pageContent = content; metadata: id, title, score and the memory's metadata).
  const retriever = new MnemoRetriever({ client, k: 3, threshold: 0 });
  const documents = await retriever.invoke('when do we deploy?');

  // A conversation kept in Mnemo, read back in order by any process that knows the session id.
  const history = new MnemoChatMessageHistory({ client, sessionId: 'support-42' });
  await history.addMessages([new HumanMessage('When do we deploy?'), new AIMessage('On Fridays, blue/green.')]);
  const messages = await history.getMessages();
  return { documents, messages };
}
