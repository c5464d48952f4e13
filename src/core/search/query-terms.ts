/**
 * Turning query text into keyword terms: lowercase words of letters and digits, common English function words
 * dropped (unless nothing else is left), duplicates removed. The keyword index stems them itself.
 */
const STOPWORDS = new Set((
  'a an and are as at be been but by can could did do does for from had has have he her him his how i if in into ' +
  'is it its me my no not of on or our she so than that the their them then there these they this to too us was ' +
  'we were what when where which who whom why will with would you your'
).split(' '));

export const MAX_KEYWORD_TERMS = 32;

export function wordsOf(text: string): string[] {
  return text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function keywordTerms(query: string): string[] {
  const words = [...new Set(wordsOf(query))];
  const content = words.filter((w) => !STOPWORDS.has(w));
  return (content.length > 0 ? content : words).slice(0, MAX_KEYWORD_TERMS);
}
