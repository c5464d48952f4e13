/**
 * English stop words: words that say how a question is put, not what it is about, so they are no evidence that a
 * memory answers it. The keyword leg never ranks by them and highlights never mark them (query-terms.ts).
 *
 * The list is the Snowball / NLTK English list (the one most retrieval tools ship), with the fragments that splitting
 * a contraction at its apostrophe leaves ("doesn't" -> "doesn", "t"; one-letter pieces are dropped as too short
 * anyway) and the modal verbs it lacks (could, would, might, must, shall). Left out on purpose, because a memory's
 * question may be about them: "may" (the month), "won" (of "win"), "ma". Not taken from the `stopword` npm package:
 * its English list lacks "when", "why", "does", "not" and "no", the very words questions are made of, and would need
 * these additions all the same.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  // Pronouns and determiners.
  'i', 'me', 'my', 'myself', 'we', 'our', 'ours', 'ourselves', 'you', 'your', 'yours', 'yourself', 'yourselves',
  'he', 'him', 'his', 'himself', 'she', 'her', 'hers', 'herself', 'it', 'its', 'itself', 'they', 'them', 'their',
  'theirs', 'themselves', 'what', 'which', 'who', 'whom', 'this', 'that', 'these', 'those', 'a', 'an', 'the',
  // Auxiliary and modal verbs.
  'am', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'have', 'has', 'had', 'having', 'do', 'does', 'did',
  'doing', 'can', 'will', 'should', 'could', 'would', 'might', 'must', 'shall',
  // Conjunctions, prepositions, adverbs of the list.
  'and', 'but', 'if', 'or', 'because', 'as', 'until', 'while', 'of', 'at', 'by', 'for', 'with', 'about', 'against',
  'between', 'into', 'through', 'during', 'before', 'after', 'above', 'below', 'to', 'from', 'up', 'down', 'in', 'out',
  'on', 'off', 'over', 'under', 'again', 'further', 'then', 'once', 'here', 'there', 'when', 'where', 'why', 'how',
  'all', 'any', 'both', 'each', 'few', 'more', 'most', 'other', 'some', 'such', 'no', 'nor', 'not', 'only', 'own',
  'same', 'so', 'than', 'too', 'very', 'just', 'now',
  // What contractions leave once split at the apostrophe (don't, we'll, they're, I've, isn't, ...).
  'don', 'll', 're', 've', 'ain', 'aren', 'couldn', 'didn', 'doesn', 'hadn', 'hasn', 'haven', 'isn', 'mightn', 'mustn',
  'needn', 'shan', 'shouldn', 'wasn', 'weren', 'wouldn',
]);
