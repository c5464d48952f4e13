/**
 * A nudge between nodes: "I appended events up to seq N". It carries no events (the log is the only source of
 * them); a node that hears it reads the log at once instead of at its next poll.
 */
export interface EventSignal {
  /** Tells the other nodes this node appended events. */
  announce(lastSeq: number): void;
  /** Calls `listener` when another node announces; returns how to stop listening. */
  onRemote(listener: (lastSeq: number) => void): () => void;
  close(): Promise<void>;
}
