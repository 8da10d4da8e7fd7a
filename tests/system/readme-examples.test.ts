import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../support/test-server.js';

// README's examples and those of the pages it links to in docs/ (in the order README lists them), run as a
// newcomer runs them: every `curl` of a ```sh block aimed at `make run`
// (127.0.0.1:3000) or `make sandbox` (127.0.0.1:4011) runs in bash, in order, against a fresh server started
// as those targets start it, and what it prints must be what README shows under it: the `# ` lines after a
// command, where `...` stands for text README leaves out. With `-i` the lines shown must appear in order
// (README shows some of the headers); otherwise they are the whole output.

const run = promisify(execFile);
/** README, then the pages of docs/ in the order its last section lists them: the order a reader follows. */
const PAGES = [
  'README.md',
  'docs/frontend.md',
  'docs/operations.md',
  'docs/deployment.md',
  'docs/testing.md',
  'docs/contract-tools.md',
  'docs/benchmarks.md',
  'docs/architecture.md',
];
const README = PAGES.map((page) => readFileSync(fileURLToPath(new URL(`../../${page}`, import.meta.url)), 'utf8')).join('\n');
const MAKE_RUN = 'http://127.0.0.1:3000';
const MAKE_SANDBOX = 'http://127.0.0.1:4011';

interface Example {
  readonly command: string;
  readonly shown: readonly string[];
}

/** The commands of README's shell blocks aimed at the two servers, each with the lines README shows under it. */
function readmeExamples(): Example[] {
  const examples: Example[] = [];
  for (const [, block] of README.matchAll(/```sh\n([\s\S]*?)```/g)) {
    if (!block!.includes(MAKE_RUN) && !block!.includes(MAKE_SANDBOX)) continue;
    if (!block!.split('\n').every((line) => line === '' || line.startsWith('#') || line.startsWith('curl ') || line.startsWith('  '))) continue;
    let current: { command: string; shown: string[] } | undefined;
    let continued = false;
    for (const line of block!.split('\n')) {
      if (continued) {
        current!.command += `\n${line}`;
      } else if (line.startsWith('curl ')) {
        current = { command: line, shown: [] };
        examples.push(current);
      } else if (line.startsWith('# ') && current) {
        current.shown.push(line.slice(2));
      }
      continued = line.endsWith('\\');
    }
  }
  return examples;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const matcher = (shown: string) => new RegExp(`^${shown.split('...').map(escaped).join('.*?')}$`);

let server: TestServer;
let sandbox: TestServer;
const credentials = { BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'dev-password' };
beforeAll(async () => {
  [server, sandbox] = await Promise.all([
    startTestServer({ env: credentials }),
    startTestServer({ env: { ...credentials, SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' } }),
  ]);
});
afterAll(() => Promise.all([server?.cleanup(), sandbox?.cleanup()]));

const examples = readmeExamples();

test('README has examples for both servers, most with what they print', () => {
  expect(examples.filter((example) => example.command.includes(MAKE_RUN)).length).toBeGreaterThan(20);
  expect(examples.filter((example) => example.command.includes(MAKE_SANDBOX)).length).toBeGreaterThanOrEqual(3);
  expect(examples.filter((example) => example.shown.length > 0).length).toBeGreaterThan(20);
});

// In README's order: later examples find what earlier ones created, as they would after `make run`.
test.each(examples.map((example) => [example.command.split('\n')[0]!, example] as const))('%s', async (_first, { command, shown }) => {
  const script = command.replaceAll(MAKE_RUN, server.url).replaceAll(MAKE_SANDBOX, sandbox.url);
  const { stdout } = await run('bash', ['-c', script], { timeout: 20_000 });
  const printed = stdout.split(/\r?\n/);
  if (printed.at(-1) === '') printed.pop();
  if (/ -[a-z]*i\b/.test(command.split('\n')[0]!)) {
    // Each shown line, in order, among the lines printed.
    let at = 0;
    for (const line of shown) {
      while (at < printed.length && !matcher(line).test(printed[at]!)) at++;
      expect({ shown: line, printed: at < printed.length ? 'found' : printed }).toEqual({ shown: line, printed: 'found' });
      at++;
    }
  } else {
    expect(printed.length).toBe(shown.length);
    for (const [i, line] of printed.entries()) expect({ line, matches: matcher(shown[i]!).test(line) }).toEqual({ line, matches: true });
  }
});
