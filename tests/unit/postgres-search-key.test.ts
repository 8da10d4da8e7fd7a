import { postgresSearchKey } from '../../server/db/postgres/search-index.js';

// The LIKE pattern PostgreSQL's trigram index is asked about for a search's (folded) text: every user whose
// text holds the search's must match it, and it should hold what pg_trgm can narrow by.

test.each([
  ['user12345', '%user1234%'],
  ['example.com', '%example%com%'],
  ['mira99', '%mira99%'],
  // A short word after another character: pg_trgm reads its start as a trigram of its own.
  ['.castellan.9', '%castella%.9%'],
  ['ann lee', '%ann%lee%'],
  ['ann 12 lee', '%ann% 12%lee%'],
])('%s is looked up as %s', (text, key) => {
  expect(postgresSearchKey(text)).toBe(key);
});

test('text without a run of three letters or digits is not looked up (the index cannot narrow it)', () => {
  expect(postgresSearchKey('zq')).toBeUndefined();
  expect(postgresSearchKey('.9')).toBeUndefined();
});

test('a separator that LIKE reads as a wildcard or an escape is escaped', () => {
  expect(postgresSearchKey('ann_9')).toBe('%ann%\\_9%');
  expect(postgresSearchKey('ann%9')).toBe('%ann%\\%9%');
  expect(postgresSearchKey('ann\\9')).toBe('%ann%\\\\9%');
});

/** LIKE with `\` as its escape, as PostgreSQL reads the key. */
function like(value: string, pattern: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`).test(value);
}

test.each(['.castellan.9', 'ann_9', 'ann%9', 'ann\\9', 'x.y.example.com', 'mira 12 wren', 'o’neil.3ab'])(
  'a user whose text holds %j matches its key',
  (text) => {
    const key = postgresSearchKey(text);
    if (key !== undefined) expect(like(`first\nlast\nsomeone${text}else@example.com`, key)).toBe(true);
  },
);
