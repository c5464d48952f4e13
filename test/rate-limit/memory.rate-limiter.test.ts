import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

rateLimiterContract('in-memory rate limiter', (clock) => createMemoryRateLimiter(clock));
