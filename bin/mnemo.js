#!/usr/bin/env node
// The `mnemo` command. It runs the compiled CLI (dist/, built by `npm ci` and `npm run build`) when dist/ matches the
// sources, and otherwise the TypeScript sources through tsx (a runtime dependency), so that it never runs code older
// than the sources in front of it and works before any build.
import { isBuildFresh } from '../scripts/build-state.js';

if (isBuildFresh()) {
  await import('../dist/app/cli-main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/app/cli-main.ts');
}
