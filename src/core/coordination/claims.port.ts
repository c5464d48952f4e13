/**
 * Short-lived exclusive claims on a name: "this user's activity was announced in the last minute", "this node
 * runs the periodic health event this interval". The in-process adapter serves one node; the Redis adapter makes a
 * claim exclusive across every node.
 */
export interface Claims {
  /**
   * Takes `name` for `ttlMs` unless a live claim holds it. Resolves to a token (to release the claim early), or
   * null when the name is held.
   */
  claim(name: string, ttlMs: number): Promise<string | null>;
  /** Frees the claim `token` names; does nothing if it expired or someone else's claim holds the name now. */
  release(name: string, token: string): Promise<void>;
}
