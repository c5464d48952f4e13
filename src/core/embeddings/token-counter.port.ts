/** Counts tokens the way usage is billed: one tokenizer, documented, for every surface that reports usage. */
export interface TokenCounter {
  /** The tokenizer's name, e.g. `cl100k_base`. */
  readonly name: string;
  /**
   * The text's token count. Asynchronous because counting a large text (up to the request body limit) must not
   * hold the event loop: an adapter counts in linear-ish time and in short slices.
   */
  count(text: string): Promise<number>;
}
