import { createMemoryStreamSlots } from '../../../src/adapters/streams/memory.stream-slots.ts';
import { streamSlotsContract } from './stream-slots.contract.ts';

streamSlotsContract('in-memory stream slots', () => ({ slots: createMemoryStreamSlots() }));
