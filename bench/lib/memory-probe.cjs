/*
 * Preloaded into a server by `npm run bench:engine -- --memory-detail` (node --require): on SIGUSR2 it writes the
 * main isolate's process.memoryUsage() and V8 heap spaces to BENCH_MEMORY_PROBE_FILE, for the memory breakdown.
 * Measurement only: the server never loads it otherwise.
 */
'use strict';
const { writeFileSync } = require('node:fs');
const v8 = require('node:v8');

const file = process.env.BENCH_MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    writeFileSync(file, JSON.stringify({ usage: process.memoryUsage(), heap: v8.getHeapStatistics(), spaces }));
  });
}
