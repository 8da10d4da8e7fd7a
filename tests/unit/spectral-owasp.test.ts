import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// docs/contract-tools.md, "The contract under outside tools": what Spectral says of the contract with only its own OpenAPI
// rules and the OWASP ruleset, none of this project's exceptions (.spectral.yaml), rule by rule. The table
// must be the run's counts, so that a change that adds a finding (or removes one) changes the page too.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test("docs/contract-tools.md's table of the plain Spectral OWASP run is what Spectral reports, rule by rule", async () => {
  // Inside node_modules, so that Spectral resolves the OWASP ruleset from the ruleset file as it would here.
  const folder = join(ROOT, 'node_modules/.cache/spectral-plain');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'ruleset.yaml'), 'extends:\n  - spectral:oas\n  - "@stoplight/spectral-owasp-ruleset"\n');
  const lint = await run(
    join(ROOT, 'node_modules/.bin/spectral'),
    ['lint', 'openapi/user-records.yaml', '--ruleset', join(folder, 'ruleset.yaml'), '-f', 'json', '-q'],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  ).catch(
    // Spectral exits non-zero when it finds errors; its report is still on stdout.
    (failed: { stdout: string }) => failed,
  );
  const found = new Map<string, number>();
  for (const { code, severity } of JSON.parse(lint.stdout) as { code: string; severity: number }[]) {
    const key = `${code} ${['error', 'warn', 'info', 'hint'][severity]}`;
    found.set(key, (found.get(key) ?? 0) + 1);
  }
  const readme = readFileSync(join(ROOT, 'docs/contract-tools.md'), 'utf8');
  const table = new Map(
    [...readme.matchAll(/^\| `([^`]+)` \| (error|warn|info|hint) \| (\d+) \|/gm)].map(([, rule, severity, count]) => [`${rule} ${severity}`, Number(count)]),
  );
  expect(Object.fromEntries(table)).toEqual(Object.fromEntries(found));
  const errors = [...found].filter(([key]) => key.endsWith(' error')).reduce((sum, [, n]) => sum + n, 0);
  const warnings = [...found].filter(([key]) => key.endsWith(' warn')).reduce((sum, [, n]) => sum + n, 0);
  expect(readme).toContain(`reports ${errors} errors and ${warnings} warnings`);
}, 60_000);
