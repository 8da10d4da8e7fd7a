import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
// @ts-expect-error: a plain ES module of the build tooling, without type declarations
import { changelogEntry, contractGate, releasedVersions } from '../../scripts/contract-gate.mjs';

// The breaking-change gate of make test (scripts/contract-gate.mjs, scripts/contract-changes.mjs): a change
// to the contract needs its info.version to move as far as the change requires, counted from the latest
// released version; and the client package publishes released contracts only (scripts/released-contract.mjs).

interface Gate {
  changes: Array<{ type: string; at?: string; description: string }>;
  level: string;
  least: string;
  operations: number;
  problems: string[];
}
type Contract = Record<string, any>;

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const versions: string[] = releasedVersions();
const latest = versions.at(-1)!;
const released: Contract = parse(readFileSync(`${ROOT}openapi/released/${latest}.yaml`, 'utf8'));
/** The released contract, changed by `change`, at `version`. */
function changed(version: string, change: (contract: Contract) => void): Contract {
  const contract = structuredClone(released);
  change(contract);
  contract.info.version = version;
  return contract;
}
const gate = (after: Contract) => contractGate(released, after) as Gate;
const [major, minor, patch] = latest.split('.').map(Number) as [number, number, number];
const nextMinor = `${major}.${minor + 1}.0`;
const nextMajor = `${major + 1}.0.0`;

const removeEmail = (contract: Contract) => {
  const user = contract.components.schemas.User;
  delete user.properties.email;
  user.required = user.required.filter((name: string) => name !== 'email');
};
// Each is a change a client notices, and each passed the gate before it compared what api-smart-diff leaves
// out or gets backwards (the subject of the change, then what the entry says of it).
const breaking: Array<[string, (contract: Contract) => void, RegExp]> = [
  ['a removed response member', removeEmail, /^removed member `\.email` in response 200 \(application\/json\)$/],
  [
    'a narrowed parameter',
    (contract) => (contract.components.parameters.PerPage.schema.maximum = 50),
    /^changed `maximum` of query parameter `per_page`: 100 → 50$/,
  ],
  [
    'a removed response header',
    (contract) => delete contract.paths['/users/{id}'].get.responses['200'].headers.ETag,
    /^removed header `ETag` of response 200$/,
  ],
  [
    'a changed security scheme',
    (contract) => (contract.components.securitySchemes.basic.scheme = 'bearer'),
    /^changed `scheme` of security scheme `basic`: "basic" → "bearer"$/,
  ],
  [
    'credentials required of an open operation',
    (contract) => (contract.paths['/users'].get.security = [{ basic: [] }]),
    /^now requires credentials \(`basic`\)$/,
  ],
  [
    'credentials required by a default an operation takes',
    (contract) => {
      contract.security = [{ basic: [] }];
      delete contract.paths['/users'].get.security;
    },
    /^now requires credentials/,
  ],
  [
    'a removed response media type',
    (contract) => {
      const content = contract.paths['/users'].get.responses['200'].content;
      content['application/vnd.users+json'] = content['application/json'];
      delete content['application/json'];
    },
    /^removed media type application\/json of response 200$/,
  ],
  [
    'a removed request media type',
    (contract) => {
      const body = contract.components.requestBodies.UserPatch.content;
      delete body['application/merge-patch+json'];
    },
    /^removed media type application\/merge-patch\+json of the request body$/,
  ],
  [
    "a response header's changed type",
    (contract) => (contract.components.headers.XTotalCount.schema = { type: 'string', maxLength: 10 }),
    /^changed `type` of header `X-Total-Count` of response 200: "integer" → "string"$/,
  ],
  ['a removed declared status', (contract) => delete contract.paths['/users/{id}'].get.responses['404'], /^removed response 404$/],
];

test.each(breaking)('%s is breaking: it fails the gate without a major version, and passes with one', (_name, change, description) => {
  const same = gate(changed(nextMinor, change));
  expect(same.level).toBe('major');
  expect(same.least).toBe(nextMajor);
  expect(same.changes.filter((one) => one.type === 'breaking').map((one) => one.description)).toContainEqual(expect.stringMatching(description));
  expect(same.problems).toEqual([
    expect.stringMatching(new RegExp(`needs? a major version: info.version must be ${nextMajor} or later, and it is ${nextMinor}$`)),
  ]);
  expect(gate(changed(nextMajor, change)).problems).toEqual([]);
});

test('an added optional response member needs a minor version; credentials no longer required, too; a description, a patch', () => {
  const added = (contract: Contract) => (contract.components.schemas.User.properties.nickname = { type: 'string', maxLength: 50 });
  expect(gate(changed(latest, added))).toMatchObject({ level: 'minor', problems: [expect.stringContaining(`${nextMinor} or later`)] });
  expect(gate(changed(nextMinor, added)).problems).toEqual([]);
  const opened = gate(changed(nextMinor, (contract) => delete contract.paths['/protected-resource'].get.security));
  expect(opened).toMatchObject({ level: 'minor', problems: [] });
  expect(opened.changes).toEqual([{ type: 'non-breaking', at: 'GET /protected-resource', description: 'no longer requires credentials' }]);
  const described = (contract: Contract) => (contract.info.description = 'Another description.');
  expect(gate(changed(latest, described))).toMatchObject({
    level: 'patch',
    problems: [expect.stringContaining(`${major}.${minor}.${patch + 1} or later`)],
  });
});

test('a version older than the latest released one fails, even without a change', () => {
  expect(gate(changed(`${major - 1}.9.9`, () => {})).problems).toEqual([`info.version is ${major - 1}.9.9, older than the released ${latest}`]);
});

test('the changelog entry names each change and the operations it is at, breaking ones first; a draft names the version it needs', () => {
  const after = changed(nextMinor, (contract) => {
    removeEmail(contract);
    contract.paths['/users'].get.parameters.push({ in: 'header', name: 'X-Trace', schema: { type: 'string', pattern: '^[a-z]+$' } });
    contract.info.description = 'Another description.';
  });
  const { changes, least, operations } = gate(after);
  const draft: string = changelogEntry(after.info.version, changes, { least, operations });
  expect(draft.split('\n')[0]).toBe(`## ${nextMinor} (draft: not released; its changes need ${nextMajor} or later)`);
  expect(draft).toMatch(/### Breaking\n\n(- .*\n)*- Removed member `\.email` in response 200 \(application\/json\): GET \/users\/\{id\}, /);
  expect(draft).toContain('- Removed required member `[].email` in response 200 (application/json): GET /users');
  expect(draft).toContain('- Added header parameter `X-Trace` (optional): GET /users');
  expect(draft).toContain('- Changed `info.description`');
  expect(draft.indexOf('### Documentation')).toBeGreaterThan(draft.indexOf('### Breaking'));
  // What api-smart-diff's own descriptions said instead.
  expect(draft).not.toMatch(/\[(Added|Removed|Replaced)\]|annotation \(| {2}in /);
  const dated: string = changelogEntry(after.info.version, changes, { date: '2026-11-29', operations });
  expect(dated.split('\n')[0]).toBe(`## ${nextMinor} (2026-11-29)`);
});

test('the changelog says "every operation" for a change made at all of them', () => {
  const after = changed(nextMinor, (contract) => {
    for (const item of Object.values<Contract>(contract.paths))
      for (const operation of Object.values<Contract>(item)) operation.responses['418'] = { description: 'A teapot.' };
  });
  const { changes, operations } = gate(after);
  expect(changelogEntry(after.info.version, changes, { date: '2026-11-29', operations })).toContain('- Added response 418: every operation');
});

describe('the repository', () => {
  let tree: string;
  /** A copy of what the gate and the publish check read, with `contract` for openapi/user-records.yaml. */
  function copyTree(contract: string, clientVersion: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'contract-gate-'));
    for (const path of [
      'scripts/contract-gate.mjs',
      'scripts/contract-changes.mjs',
      'scripts/released-contract.mjs',
      'openapi/released',
      'openapi/CHANGELOG.md',
    ])
      cpSync(`${ROOT}${path}`, join(dir, path), { recursive: true });
    mkdirSync(join(dir, 'client'));
    const client = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8'));
    writeFileSync(join(dir, 'client/package.json'), JSON.stringify({ ...client, version: clientVersion }));
    writeFileSync(join(dir, 'openapi/user-records.yaml'), contract);
    symlinkSync(`${ROOT}node_modules`, join(dir, 'node_modules'));
    return dir;
  }
  const releasedText = readFileSync(`${ROOT}openapi/released/${latest}.yaml`, 'utf8');
  afterEach(() => tree && rmSync(tree, { recursive: true, force: true }));

  test('every released version has its file, named by its version, and the current contract is the latest or a draft after it', async () => {
    expect(versions).toEqual(expect.arrayContaining(['1.0.0', '2.0.0', '2.1.0']));
    const { stdout } = await run(process.execPath, ['scripts/contract-gate.mjs'], { cwd: ROOT });
    expect(stdout).toMatch(
      /^(the contract is the released \S+|the contract is a draft of \S+: \d+ changes? since the released \S+ .* \(--entry lists them\))\n$/,
    );
    const client = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8')) as { version: string };
    expect(client.version).toBe((parse(readFileSync(`${ROOT}openapi/user-records.yaml`, 'utf8')) as Contract).info.version);
  });

  test('a breaking change under the released version fails the gate, which says what it needs', async () => {
    // The ETag header of GET /users/{id}, taken out of the released contract as an editor would.
    const contract = releasedText.replace(/(\n {6}responses:\n {8}'200':\n(?: {10}.*\n)*? {10}headers:\n) {12}ETag: .*\n/, '$1');
    expect(contract).not.toBe(releasedText);
    tree = copyTree(contract, latest);
    const failed = await run(process.execPath, ['scripts/contract-gate.mjs'], { cwd: tree }).catch((error) => error);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`## ${latest} (draft: not released; its changes need ${nextMajor} or later)`);
    // Shape A's GET /api/users/{id} declares no other header: its `headers:` is left empty.
    expect(failed.stderr).toContain('- Changed headers of response 200 (removed `ETag`): GET /api/users/{id}');
    expect(failed.stderr).toContain(
      `Breaking-change gate: 1 breaking change since the released ${latest} (listed above) needs a major version: info.version must be ${nextMajor} or later, and it is ${latest}`,
    );
    expect(failed.stderr).toContain(`Breaking-change gate: ${latest} is released, and openapi/user-records.yaml differs from openapi/released/${latest}.yaml`);
  });

  test('publishing refuses a version that is not released, or a contract that differs from the released one', async () => {
    const refused = async (contract: string, version: string) => {
      tree = copyTree(contract, version);
      const result = await run(process.execPath, ['../scripts/released-contract.mjs'], { cwd: join(tree, 'client') }).catch((error) => error);
      rmSync(tree, { recursive: true, force: true });
      return result;
    };
    const draft = releasedText.replace(`version: ${latest}`, `version: ${nextMinor}`);
    expect(await refused(draft, nextMinor)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`@user-records/client@${nextMinor} is not published: ${nextMinor} is not a released contract`),
    });
    expect(await refused(`${releasedText}# an edit\n`, latest)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`openapi/user-records.yaml differs from openapi/released/${latest}.yaml`),
    });
    expect(await refused(releasedText, latest)).toMatchObject({ stdout: expect.stringContaining('the contract is the released') });
  });

  test('a release is recorded once: its contract file, and its changelog entry on top', async () => {
    const draft = releasedText
      .replace(`version: ${latest}`, `version: ${nextMinor}`)
      .replace(/\n {6}tags: \[shape-b\]\n/, '\n      tags: [shape-b]\n      deprecated: true\n');
    tree = copyTree(draft, nextMinor);
    const { stdout } = await run(process.execPath, ['scripts/contract-gate.mjs', '--release'], { cwd: tree });
    expect(stdout).toContain(`released ${nextMinor}: openapi/CHANGELOG.md and openapi/released/${nextMinor}.yaml`);
    expect(readFileSync(join(tree, `openapi/released/${nextMinor}.yaml`), 'utf8')).toBe(draft);
    expect(readFileSync(join(tree, 'openapi/CHANGELOG.md'), 'utf8')).toMatch(
      new RegExp(`^# Contract changelog\\n\\n## ${nextMinor.replaceAll('.', '\\.')} \\(\\d{4}-\\d\\d-\\d\\d\\)\\n\\n### Deprecated\\n`),
    );
    const again = await run(process.execPath, ['scripts/contract-gate.mjs', '--release'], { cwd: tree }).catch((error) => error);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining(`${nextMinor} is released already`) });
  });
});
