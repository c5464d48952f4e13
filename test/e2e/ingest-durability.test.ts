import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlm } from '../support/mock-llm-server.ts';
import { startCompiledServer, type StartedServer } from '../support/npm-start.ts';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Ingestion is a leased job in the store (docs/ingestion.md): a server killed with SIGKILL while its model call is in
 * flight leaves the job `running` under a lease that lapses (MNEMO_INGEST_LEASE_MS, 2 s here), and a second server
 * on the same data takes it, runs it to the end and writes its memories exactly once.
 */
describe('ingestion across SIGKILL', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-ingest-crash-'));
  let llm: MockLlm | undefined;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await llm?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const facts = { facts: [{ content: 'Grace keeps her passport in the blue drawer', sources: [0] }, { content: 'Grace flies to Lima on May 2', sources: [0] }] };

  /** The compiled server (what `npm start` runs), so SIGKILL hits the server itself. */
  async function start(env: NodeJS.ProcessEnv): Promise<StartedServer> {
    const server = await startCompiledServer(env);
    children.push(server.child);
    return server;
  }

  const until = async (what: string, done: () => boolean | Promise<boolean>, ms: number) => {
    for (const deadline = Date.now() + ms; !(await done());) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('a job whose server was killed mid-call is taken by the next server and written exactly once', async () => {
    // The first extraction never answers in time (its server dies waiting); the next one answers at once.
    llm = await startMockLlm({ script: (req) => (req.index === 0 ? { json: facts, delayMs: 60_000 } : { json: facts }) });
    const env = {
      ...process.env, MNEMO_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', MNEMO_EMBEDDINGS: 'hashing', MNEMO_LOG_LEVEL: 'warn',
      MNEMO_MAX_EVENT_LOOP_DELAY_MS: '0', MNEMO_LLM_URL: llm.url, MNEMO_LLM_MODEL: 'mock', MNEMO_INGEST_LEASE_MS: '2000',
    };
    await run(process.execPath, ['scripts/build.js', '--if-stale'], { cwd: root });
    // The key is made while the first server starts (both open the store; its migrations take the write lock).
    const [{ stdout }, first] = await Promise.all([run(process.execPath, [
      'bin/mnemo.js', 'keys', 'create', '--tier', 'enterprise', '--scopes', 'memories:read,memories:write,memories:auto_ingest', '--json',
    ], { cwd: root, env }), start(env)]);
    const headers = { 'x-api-key': (JSON.parse(stdout) as { key: string }).key, 'content-type': 'application/json' };

    const res = await fetch(`${first.url}/api/v1/memories/ingest`, {
      method: 'POST', headers,
      body: JSON.stringify({ policy: 'auto', messages: [{ role: 'user', content: 'My passport is in the blue drawer; I fly to Lima on May 2' }] }),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as Json).data.id as string;
    await until('the first model call', () => llm!.requests.length === 1, 10_000);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await start(env);
    const job = async (): Promise<Json> => ((await (await fetch(`${second.url}/api/v1/memories/ingest/${id}`, { headers })).json()) as Json).data;
    await until('the job to complete on the second server', async () => (await job()).state === 'completed', 15_000);

    const done = await job();
    expect(done.proposals.map((p: Json) => [p.content, p.status])).toEqual([
      ['Grace keeps her passport in the blue drawer', 'applied'], ['Grace flies to Lima on May 2', 'applied'],
    ]);
    expect(done.usage.model_calls).toBe(1);
    expect(llm.requests).toHaveLength(2);
    const list = (await (await fetch(`${second.url}/api/v1/memories?limit=100`, { headers })).json()) as Json;
    expect(list.data.map((m: Json) => m.content).sort()).toEqual(['Grace flies to Lima on May 2', 'Grace keeps her passport in the blue drawer']);
    expect(list.data.map((m: Json) => m.id).sort()).toEqual(done.proposals.map((p: Json) => p.memory_id).sort());

    second.child.kill('SIGTERM');
    await second.exited;
  }, 60_000);
});
