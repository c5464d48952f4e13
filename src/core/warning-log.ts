/** Where adapters report what an operator should fix (pino's calling convention, so the server's logger fits). */
export interface WarningLog {
  warn(details: object, message: string): void;
}

/** Warnings a relay keeps until its target is attached; later ones are dropped. */
const HELD_BEFORE_ATTACH = 50;

/**
 * A warning log whose target is chosen later: storage is opened before the server (and its logger) exists.
 * Warnings before `attach` (a store file others can read, found when the store opens) are held, up to
 * HELD_BEFORE_ATTACH, and given to the first target attached.
 */
export function createWarningRelay(): WarningLog & { attach(target: WarningLog): void } {
  let target: WarningLog | null = null;
  let held: [object, string][] = [];
  return {
    warn(details, message) {
      if (target) target.warn(details, message);
      else if (held.length < HELD_BEFORE_ATTACH) held.push([details, message]);
    },
    attach(next) {
      target = next;
      for (const [details, message] of held) next.warn(details, message);
      held = [];
    },
  };
}
