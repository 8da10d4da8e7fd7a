// Unicode text and what JSON can carry that is not: half of a surrogate pair alone (`"\ud800"`). Browser-safe.

/** An unpaired surrogate: a high one not followed by a low one, or a low one not after a high one. */
export const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNPAIRED_SURROGATES = new RegExp(UNPAIRED_SURROGATE, 'g');

/** The text with each unpaired surrogate shown as U+FFFD, as a UTF-8 decoder shows a broken sequence. */
export const wellFormed = (text: string): string => text.replace(UNPAIRED_SURROGATES, '\uFFFD');
