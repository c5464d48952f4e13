import { main } from './start.ts';

await main();
