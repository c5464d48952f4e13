#!/usr/bin/env node
// The `mnemo` command. Installed from the packed tarball, it runs the compiled CLI (dist/), which is all the package
// holds. In a checkout it runs dist/ when dist/ matches the sources (built by `npm ci` and `npm run build`), and
// otherwise the TypeScript sources through tsx, so that it never runs code older than the sources in front of it and
// works before any build.
import { haveSources, isBuildFresh } from '../scripts/build-state.js';

if (!haveSources() || isBuildFresh()) {
  await import('../dist/app/cli-main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/app/cli-main.ts');
}
