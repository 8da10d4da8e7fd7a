import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { npmTool } from '../support/npm-tools.js';

// Redocly CLI's recommended rules, as a team that lints every contract it takes in runs them: with none of
// this project's settings, the contract and its sandbox variant pass without an error or a warning (Spectral,
// with its OWASP rules, is the linter of make lint: docs/contract-tools.md).

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = npmTool('@redocly/cli', '2.77.0', '@redocly/cli/bin/cli.js');

test.each(['openapi/user-records.yaml', 'generated/user-records.sandbox.yaml'])(
  '%s passes Redocly recommended, unaided',
  async (file) => {
    const result = await run(process.execPath, [REDOCLY, 'lint', '--extends=recommended', '--format=stylish', file], { cwd: ROOT }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${result.stdout}${result.stderr}`).toContain('Your API description is valid');
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/warning|error/i);
  },
  120_000,
);
