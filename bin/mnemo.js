#!/usr/bin/env node
// The `mnemo` command runs the TypeScript sources through tsx (a runtime dependency): no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/app/cli-main.ts');
