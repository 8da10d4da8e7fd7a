import { hasUnpairedSurrogate, wellFormed } from '../../server/http/contract/unicode-text.js';

// Half of a surrogate pair alone is what JSON can carry and no UTF-8 text can; whole pairs are characters.

test.each([
  ['plain text', 'Ada Lovelace', false, 'Ada Lovelace'],
  ['a whole pair (an emoji)', 'Ada 😀', false, 'Ada 😀'],
  ['pairs back to back', '😀😀', false, '😀😀'],
  ['a high half at the end', 'Ada\uD83D', true, 'Ada\uFFFD'],
  ['a low half at the start', '\uDE00Ada', true, '\uFFFDAda'],
  ['a high half before a letter', '\uD83Da', true, '\uFFFDa'],
  ['two high halves, then a low one', '\uD83D\uD83D\uDE00', true, '\uFFFD😀'],
  ['a low half after a whole pair', '😀\uDE00', true, '😀\uFFFD'],
  ['only halves', '\uDE00\uD800', true, '\uFFFD\uFFFD'],
  ['empty', '', false, ''],
])('%s', (_case, text, unpaired, shown) => {
  expect(hasUnpairedSurrogate(text)).toBe(unpaired);
  expect(wellFormed(text)).toBe(shown);
  // The same verdict as the engine's own (Node 20+).
  expect(hasUnpairedSurrogate(text)).toBe(!(text as string & { isWellFormed(): boolean }).isWellFormed());
});
