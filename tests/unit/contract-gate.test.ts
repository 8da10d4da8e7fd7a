import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
// @ts-expect-error: a plain ES module of the build tooling, without type declarations
import { changelogEntry, contractGate } from '../../scripts/contract-gate.mjs';

// The breaking-change gate of make test (scripts/contract-gate.mjs): a change to the contract needs its
// info.version to move as far as the change requires.

interface Gate {
  changes: Array<{ type: string; description: string }>;
  level: string;
  problems: string[];
}
type Contract = Record<string, any>;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const released: Contract = parse(readFileSync(`${ROOT}openapi/released/1.0.0.yaml`, 'utf8'));
/** The released contract, changed by `change`, at `version`. */
function changed(version: string, change: (contract: Contract) => void): Contract {
  const contract = structuredClone(released);
  change(contract);
  contract.info.version = version;
  return contract;
}
const gate = (after: Contract) => contractGate(released, after) as Gate;
const [major, minor, patch] = (released.info.version as string).split('.').map(Number) as [number, number, number];
const removeEmail = (contract: Contract) => {
  const user = contract.components.schemas.User;
  delete user.properties.email;
  user.required = user.required.filter((name: string) => name !== 'email');
};
const narrowPerPage = (contract: Contract) => {
  contract.components.parameters.PerPage.schema.maximum = 50;
};

test.each([
  ['a removed response field', removeEmail],
  ['a narrowed parameter', narrowPerPage],
])('%s is breaking: it fails without a major version, and passes with one', (_name, change) => {
  const same = gate(changed(`${major}.${minor + 1}.0`, change));
  expect(same.level).toBe('major');
  expect(same.problems).toEqual([expect.stringContaining(`needs a major version`)]);
  expect(same.problems[0]).toContain(`info.version must be ${major + 1}.0.0 or later`);
  expect(gate(changed(`${major + 1}.0.0`, change)).problems).toEqual([]);
});

test('an added optional response field needs a minor version; a description, a patch', () => {
  const added = (contract: Contract) => (contract.components.schemas.User.properties.nickname = { type: 'string', maxLength: 50 });
  expect(gate(changed(released.info.version, added))).toMatchObject({
    level: 'minor',
    problems: [expect.stringContaining(`${major}.${minor + 1}.0 or later`)],
  });
  expect(gate(changed(`${major}.${minor + 1}.0`, added)).problems).toEqual([]);
  const described = (contract: Contract) => (contract.info.description = 'Another description.');
  expect(gate(changed(released.info.version, described))).toMatchObject({
    level: 'patch',
    problems: [expect.stringContaining(`${major}.${minor}.${patch + 1} or later`)],
  });
});

test('the changelog entry is made from the changes, breaking ones first', () => {
  const after = changed(`${major + 1}.0.0`, (contract) => {
    removeEmail(contract);
    contract.info.description = 'Another description.';
  });
  const entry: string = changelogEntry(after.info.version, gate(after).changes, '2026-11-26');
  expect(entry).toMatch(
    new RegExp(`^## ${major + 1}\\.0\\.0 \\(2026-11-26\\)\\n\\n### Breaking\\n\\n- GET /users: \\[Removed\\] required status from \`\\[\\]\\.email\``),
  );
  expect(entry).toContain('- GET /users/{id}: [Removed] annotation (email) in Response 200 content (application/json)');
  expect(entry.indexOf('### Documentation')).toBeGreaterThan(entry.indexOf('### Breaking'));
});

test('this repository passes: its contract is the released one or moved far enough, and the client carries its version', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['scripts/contract-gate.mjs'], { cwd: ROOT });
  expect(stdout).toMatch(
    /^(the contract is the released \S+|the contract passes the breaking-change gate at \S+: \d+ change\(s\) since the released .* \(--entry prints them\))\n$/,
  );
  const client = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8')) as { version: string };
  expect(client.version).toBe((parse(readFileSync(`${ROOT}openapi/user-records.yaml`, 'utf8')) as Contract).info.version);
});
