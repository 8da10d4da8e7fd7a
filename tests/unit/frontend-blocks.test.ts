import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docBlocks } from '../support/doc-blocks.js';

// The TypeScript blocks of docs/frontend.md that set up MSW, and every TypeScript block of the client package's
// README, are compiled, on each msw major the client's peer range names, by a test of make test: a frontend
// team copies them into its own project.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = 'docs/frontend.md';
const mswBlocks = docBlocks(PAGE, 'ts').filter((block) => /from 'msw[/']/.test(block.text));

/** The text of every test file, where a tested block's id must be asked for. */
const tests = readdirSync(join(ROOT, 'tests'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
  .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
  .join('\n');

test('every block of the page that uses msw is marked tested, and a test compiles it through docSource', () => {
  expect(mswBlocks.length).toBeGreaterThan(1);
  expect(mswBlocks.filter((block) => block.kind !== 'tested').map((block) => block.text)).toEqual([]);
  expect(mswBlocks.map((block) => block.label).filter((id) => !tests.includes(`docSource('${PAGE}', '${id}'`))).toEqual([]);
});

test("every TypeScript block of the package's README is marked tested, and a test compiles it through docSource", () => {
  const blocks = docBlocks('client/README.md', 'ts');
  expect(blocks.length).toBeGreaterThan(1);
  expect(blocks.filter((block) => block.kind !== 'tested').map((block) => block.text)).toEqual([]);
  expect(blocks.map((block) => block.label).filter((id) => !tests.includes(`docSource('client/README.md', '${id}'`))).toEqual([]);
});
