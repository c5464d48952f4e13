import { generateText, stepCountIs, type LanguageModel } from 'ai';
import { createMnemoClient } from 'mnemo/client';
import { mnemoTools } from 'mnemo/integrations/vercel-ai';

// `model` is any AI SDK model, e.g. openai('gpt-4.1') from @ai-sdk/openai.
export async function run({ baseUrl, apiKey, model }: { baseUrl: string; apiKey: string; model: LanguageModel }) {
  const client = createMnemoClient({ baseUrl, apiKey });
  return generateText({
    model,
    tools: mnemoTools(client, { tags: ['assistant'] }),
    stopWhen: stepCountIs(3),
    prompt: 'Remember that the office moves to York in March.',
  });
}
