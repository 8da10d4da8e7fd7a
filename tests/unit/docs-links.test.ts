import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// README and docs/ link to each other and into the repository: every link must reach a file that exists, and
// every `#anchor` a heading of that file, so that a page moved or a heading renamed cannot leave a reader at
// a dead end. Every page of docs/ is listed in README.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** The text outside fenced code blocks, where links and headings are. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`; repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

const links = (page: string) => [...prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!).filter((target) => !/^[a-z]+:/.test(target));

test.each(PAGES)('every link of %s reaches a file and a heading that exist', (page) => {
  const broken = links(page).filter((target) => {
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
    if (!existsSync(join(ROOT, file))) return true;
    return anchor !== undefined && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor);
  });
  expect(broken).toEqual([]);
});

test('README lists every page of docs/', () => {
  const listed = new Set(links('README.md').map((target) => target.split('#')[0]));
  expect(PAGES.filter((page) => page.startsWith('docs/') && !listed.has(page))).toEqual([]);
});
