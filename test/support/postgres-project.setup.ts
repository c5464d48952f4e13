import { afterAll } from 'vitest';
import { closeTestPglite } from './test-store.ts';

// The `postgres` project's setup file: each test file's PGlite is closed after the file, like its apps.
afterAll(closeTestPglite);
