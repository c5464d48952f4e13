/** Where adapters report what an operator should fix (pino's calling convention, so the server's logger fits). */
export interface WarningLog {
  warn(details: object, message: string): void;
}

/**
 * A warning log whose target is chosen later: storage is opened before the server (and its logger) exists.
 * Warnings before `attach` are dropped.
 */
export function createWarningRelay(): WarningLog & { attach(target: WarningLog): void } {
  let target: WarningLog | null = null;
  return {
    warn(details, message) {
      target?.warn(details, message);
    },
    attach(next) {
      target = next;
    },
  };
}
