#!/usr/bin/env node
// The breaking-change gate (make test): compares openapi/user-records.yaml with the last released contract,
// openapi/released/1.0.0.yaml, using api-smart-diff, which classifies each change of an OpenAPI 3.0
// document as breaking, non-breaking, deprecated or annotation. The contract's info.version (semver) must
// have moved at least as far as its changes require (breaking: major; non-breaking or deprecated: minor;
// annotation: patch), and the client package carries the same version.
//   node scripts/contract-gate.mjs            check, in one line when it passes
//   node scripts/contract-gate.mjs --entry    check; print the changelog entry the changes make
//   node scripts/contract-gate.mjs --release  also prepend that entry to openapi/CHANGELOG.md and make the
//                                             current contract the released one (make release-contract)
import { readFileSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { apiCompare } from 'api-smart-diff';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LEVELS = ['none', 'patch', 'minor', 'major'];
const LEVEL_OF = { breaking: 'major', 'non-breaking': 'minor', deprecated: 'minor', annotation: 'patch', unclassified: 'patch' };

const semver = (text) => {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(String(text));
  if (!match) throw new Error(`info.version must be a version such as 1.2.3 (it is ${JSON.stringify(text)})`);
  return match.slice(1).map(Number);
};
/** The least version after `released` that a change of `level` needs. */
function required(released, level) {
  const [major, minor, patch] = released;
  if (level === 'major') return [major + 1, 0, 0];
  if (level === 'minor') return [major, minor + 1, 0];
  if (level === 'patch') return [major, minor, patch + 1];
  return released;
}
const compare = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Where in the contract a change is: the operation (`GET /users`), or the top-level member it is under. */
const where = (path) => (path[0] === 'paths' && path.length > 2 ? `${String(path[2]).toUpperCase()} ${path[1]}` : path.slice(0, 2).join('.'));

/**
 * The changes from `before` to `after` (OpenAPI documents as data): each with its class and description,
 * the level they need, and the check of `after`'s info.version against `before`'s. Changes to info.version
 * itself are not counted.
 */
export function contractGate(before, after) {
  const { diffs } = apiCompare(before, after);
  const changes = diffs
    .filter((diff) => !(diff.path[0] === 'info' && diff.path[1] === 'version'))
    // A change to a shared component is reported again at each place that uses it, described; the
    // components' own entries carry no description.
    .filter((diff) => diff.description)
    .map((diff) => ({ type: diff.type, description: `${where(diff.path)}: ${diff.description}` }));
  const level = changes.reduce((most, change) => (LEVELS.indexOf(LEVEL_OF[change.type]) > LEVELS.indexOf(most) ? LEVEL_OF[change.type] : most), 'none');
  const released = semver(before.info.version);
  const current = semver(after.info.version);
  const least = required(released, level);
  const problems = [];
  if (compare(current, least) < 0) {
    problems.push(
      level === 'none'
        ? `info.version is ${after.info.version}, older than the released ${before.info.version}`
        : `the contract changed since ${before.info.version} in a way that needs a ${level} version (${changes.filter((change) => LEVEL_OF[change.type] === level).length} ${level === 'major' ? 'breaking ' : ''}change(s), listed above): info.version must be ${least.join('.')} or later (it is ${after.info.version})`,
    );
  }
  return { changes, level, problems };
}

/** The changelog entry of a release: its version and its changes, breaking ones first. */
export function changelogEntry(version, changes, date = new Date().toISOString().slice(0, 10)) {
  const order = ['breaking', 'deprecated', 'non-breaking', 'annotation', 'unclassified'];
  const titles = { breaking: 'Breaking', deprecated: 'Deprecated', 'non-breaking': 'Added or widened', annotation: 'Documentation', unclassified: 'Other' };
  const lines = [`## ${version} (${date})`, ''];
  for (const type of order) {
    const described = [...new Set(changes.filter((change) => change.type === type).map((change) => change.description))];
    if (described.length === 0) continue;
    lines.push(`### ${titles[type]}`, '', ...described.map((text) => `- ${text}`), '');
  }
  if (changes.length === 0) lines.push('No change to the contract.', '');
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const read = (path) => parse(readFileSync(`${ROOT}${path}`, 'utf8'));
  const released = read('openapi/released/1.0.0.yaml');
  const current = read('openapi/user-records.yaml');
  const client = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8'));
  const { changes, level, problems } = contractGate(released, current);
  if (client.version !== current.info.version)
    problems.push(`client/package.json's version is ${client.version}; it must be the contract's info.version, ${current.info.version}`);
  const entry = changelogEntry(current.info.version, changes);
  // One line when the gate passes: the changes' entry, which can run to hundreds of lines, only on demand
  // (--entry, --release) or when it fails, where it shows what needs the version.
  const counts = Object.entries(Object.groupBy(changes, (change) => change.type)).map(([type, of]) => `${of.length} ${type}`);
  if (changes.length > 0)
    console.log(
      `the contract passes the breaking-change gate at ${current.info.version}: ${changes.length} change(s) since the released ${released.info.version} (${counts.join(', ')}) need a ${level} version${process.argv.includes('--entry') ? `:\n\n${entry}` : ' (--entry prints them)'}`,
    );
  else console.log(`the contract is the released ${released.info.version}`);
  if (problems.length > 0) {
    if (changes.length > 0) console.error(`\n${entry}`);
    for (const problem of problems) console.error(`Breaking-change gate: ${problem}`);
    process.exit(1);
  }
  if (process.argv.includes('--release')) {
    const changelog = `${ROOT}openapi/CHANGELOG.md`;
    const before = existsSync(changelog) ? readFileSync(changelog, 'utf8').replace(/^# .*\n\n/, '') : '';
    writeFileSync(changelog, `# Contract changelog\n\n${entry}\n${before}`);
    copyFileSync(`${ROOT}openapi/user-records.yaml`, `${ROOT}openapi/released/1.0.0.yaml`);
    console.log(`released ${current.info.version}: openapi/CHANGELOG.md and openapi/released/1.0.0.yaml`);
  }
}
