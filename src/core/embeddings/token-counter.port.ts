/** Counts tokens the way usage is billed: one tokenizer, documented, for every surface that reports usage. */
export interface TokenCounter {
  /** The tokenizer's name, e.g. `cl100k_base`. */
  readonly name: string;
  count(text: string): number;
}
