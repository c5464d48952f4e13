import { createMemoryDashboardSessions } from '../../../src/adapters/dashboard-sessions/memory.dashboard-sessions.ts';
import { sessionStoreContract } from './session-store.contract.ts';

sessionStoreContract('in-memory sessions', (clock, limits) => {
  const store = createMemoryDashboardSessions(clock, limits);
  return { store, peer: store };
});
