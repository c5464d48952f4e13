import { main } from './start.ts';

// The store holds memories, keys and audit rows: what this process creates is for its own user alone (0700, 0600).
process.umask(0o077);
await main();
