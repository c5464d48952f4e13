import { createMnemoClient, MnemoError } from 'mnemo/client';

export async function run({ baseUrl, apiKey }: { baseUrl: string; apiKey: string }) {
  const mnemo = createMnemoClient({ baseUrl, apiKey, workspace: 'docs', retry: { maxRetries: 2, maxDelayMs: 10_000 } });

  const { data: memory } = await mnemo.memories.create({ title: 'Release process', content: 'We deploy with blue/green on Fridays', tags: ['ops'] });
  const { data: found } = await mnemo.memories.search({ query: 'how do we deploy?', limit: 5, threshold: 0.5 });
  const { matches } = await mnemo.memories.hybrid({ query: 'deploy Fridays', topK: 5 });

  // Facts that change: the new memory supersedes the old one, whose history keeps the chain.
  const { data: moved } = await mnemo.memories.create({ title: 'Release process', content: 'We deploy on Thursdays', supersedes: [memory.id] });
  const { data: history } = await mnemo.memories.history(memory.id);

  try {
    await mnemo.memories.get('00000000-0000-4000-8000-000000000000');
  } catch (error) {
    if (!(error instanceof MnemoError)) throw error;
    console.log(error.code, error.status, error.requestId); // MEMORY_NOT_FOUND 404 req_…
  }

  // The event stream, open once awaited (every later event arrives) and resumable: keep `stream.lastEventId` and
  // pass it as `lastEventId` to pick up where you left off.
  const stream = await mnemo.events.stream({ events: ['memory.created'], lastEventId: undefined });
  await mnemo.memories.create({ title: 'Streamed', content: 'Arrives as an event' });
  for await (const event of stream) {
    console.log(event.type, event.data.id);
    break;
  }
  return { memory, found, matches, moved, history, lastEventId: stream.lastEventId };
}
