// Unicode text and what JSON can carry that is not: half of a surrogate pair alone (`"\ud800"`). Browser-safe,
// without regular-expression lookbehind (which Safari before 16.4 cannot parse).

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Where the text has a surrogate that is not half of a pair, or -1. */
function unpairedAt(text: string, from = 0): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isHigh(code) && isLow(text.charCodeAt(i + 1))) i++;
    else if (isHigh(code) || isLow(code)) return i;
  }
  return -1;
}

/** Whether the text holds half of a surrogate pair alone. */
export const hasUnpairedSurrogate = (text: string): boolean => unpairedAt(text) !== -1;

/** The text with each unpaired surrogate shown as U+FFFD, as a UTF-8 decoder shows a broken sequence. */
export function wellFormed(text: string): string {
  let at = unpairedAt(text);
  if (at === -1) return text;
  let shown = '';
  let from = 0;
  while (at !== -1) {
    shown += `${text.slice(from, at)}\uFFFD`;
    from = at + 1;
    at = unpairedAt(text, from);
  }
  return shown + text.slice(from);
}
