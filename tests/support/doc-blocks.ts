import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The code blocks of a page of docs/, as a reader copies them: each block follows a marker line that says
// either which test runs it as written (`<!-- tested: <id> -->`) or why it cannot be run here
// (`<!-- illustrative: <why> -->`, a server of the reader's own, say).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DocBlock {
  /** The marker's kind and what follows it: the block's id, or why it is illustrative. */
  readonly kind: 'tested' | 'illustrative' | 'unmarked';
  readonly label: string;
  /** The block's text, as written. */
  readonly text: string;
}

/** Every block of `page` (a path from the repository's root) in `language` (```sh, ```ts), in order, with the marker before it. */
export function docBlocks(page: string, language = 'sh'): DocBlock[] {
  const source = readFileSync(`${ROOT}${page}`, 'utf8');
  const block = new RegExp(`(?:<!-- (tested|illustrative): ([^\\n]*?) -->\\n)?\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g');
  return [...source.matchAll(block)].map(([, kind, label, text]) => ({
    kind: (kind as 'tested' | 'illustrative' | undefined) ?? 'unmarked',
    label: label ?? '',
    text: text!,
  }));
}

/**
 * The ```sh block of `page` marked `<!-- tested: <id> -->`, as a script for bash (`set -e` first, so that a command
 * that fails fails it), with each [written, here] pair replaced: what names a reader's own setting (a port, a
 * project, a password) becomes the test's.
 */
export function docBlock(page: string, id: string, replacements: readonly (readonly [string, string])[] = []): string {
  let text = docSource(page, id, 'sh');
  for (const [written, here] of replacements) {
    if (!text.includes(written)) throw new Error(`the block ${id} of ${page} no longer holds ${JSON.stringify(written)}`);
    text = text.replaceAll(written, here);
  }
  return `set -e\n${text}`;
}

/** The text of the block of `page` in `language` marked `<!-- tested: <id> -->`, as written: a ```ts block to compile, say. */
export function docSource(page: string, id: string, language: string): string {
  const block = docBlocks(page, language).find((candidate) => candidate.kind === 'tested' && candidate.label === id);
  if (!block) throw new Error(`${page} has no ${language} block marked <!-- tested: ${id} -->`);
  return block.text;
}
