import { createMemoryClient } from '@lanonasis/memory-client';

export async function run({ baseUrl, apiKey }: { baseUrl: string; apiKey: string }) {
  // apiKey is sent as X-API-Key; authToken (as Bearer) works the same with the same Mnemo key.
  const client = createMemoryClient({ apiUrl: baseUrl, apiKey });
  const { data: memory } = await client.createMemory({ title: 'Release process', content: 'We deploy with blue/green on Fridays', memory_type: 'workflow', tags: ['ops'] });
  const { data: found } = await client.searchMemories({ query: 'how do we deploy?', limit: 5, threshold: 0.5, status: 'active' });
  console.log(memory?.id, found?.results.map((r) => r.title));
  return { memory, found };
}
