/**
 * Fixtures kept for the whole test process (`isolate: false`: the files of a worker share it), such as the dashboard
 * tests' one Chromium (test/dashboard/chromium.ts). Starting one may add process listeners on purpose (playwright's
 * `exit` handler, which kills the browser when the process ends): they are remembered here, by identity, so that
 * test/support/leak-guard.setup.ts does not take them for listeners left behind by the file that started the fixture
 * (nor miss them gone in the file during which the fixture stops).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- process.listeners() returns Function[]
type Listener = Function;
const KEY = Symbol.for('mnemo.test.processFixtureListeners');
const store = globalThis as Record<symbol, Set<Listener> | undefined>;
const fixtureListeners = (): Set<Listener> => (store[KEY] ??= new Set());

/** Whether `listener` was added by the start of a process fixture. */
export const isProcessFixtureListener = (listener: Listener): boolean => fixtureListeners().has(listener);

/** Starts a fixture that outlives the file starting it; the process listeners of `events` its start adds are the fixture's. */
export async function startForTheProcess<T>(events: readonly string[], start: () => Promise<T>): Promise<T> {
  const before = new Set(events.flatMap((event) => (process as NodeJS.EventEmitter).listeners(event)));
  try {
    return await start();
  } finally {
    for (const event of events) {
      for (const listener of (process as NodeJS.EventEmitter).listeners(event)) if (!before.has(listener)) fixtureListeners().add(listener);
    }
  }
}
