import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docBlocks } from '../support/doc-blocks.js';

// Every command block of docs/deployment.md is run as written by a test of make test, or the page says why it
// cannot be (it names a server of the reader's own): the operator's day, as the page writes it.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = 'docs/deployment.md';
const blocks = docBlocks(PAGE);

/** The text of every test file, where a tested block's id must be asked for. */
const tests = readdirSync(join(ROOT, 'tests'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
  .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
  .join('\n');

test('every shell block of the page is marked tested or illustrative, with an id or a reason', () => {
  expect(blocks.length).toBeGreaterThan(5);
  expect(blocks.filter((block) => block.kind === 'unmarked').map((block) => block.text)).toEqual([]);
  for (const block of blocks) expect(block.label.length).toBeGreaterThan(block.kind === 'illustrative' ? 20 : 2);
});

test('each tested block has an id of its own, and a test runs it through docBlock', () => {
  const ids = blocks.filter((block) => block.kind === 'tested').map((block) => block.label);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.filter((id) => !tests.includes(`docBlock('${PAGE}', '${id}'`))).toEqual([]);
});
