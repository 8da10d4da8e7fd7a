#!/usr/bin/env node
// The breaking-change gate (make test): compares openapi/user-records.yaml with the latest released contract
// (openapi/released/<version>.yaml, one file per released version) through scripts/contract-changes.mjs.
// The contract's info.version (semver) must have moved at least as far as its changes require (breaking:
// major; non-breaking or deprecated: minor; annotation or unclassified: patch), and the client package
// carries the same version. A version is released once: its file is never written again, and the package
// publishes only a released version (scripts/released-contract.mjs).
//   node scripts/contract-gate.mjs            check, in one line when it passes
//   node scripts/contract-gate.mjs --entry    check; print the draft changelog entry the changes make
//   node scripts/contract-gate.mjs --release  also prepend that entry to openapi/CHANGELOG.md and record the
//                                             contract as released (make release-contract)
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { contractChanges } from './contract-changes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RELEASED = `${ROOT}openapi/released/`;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
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
const plural = (count, one) => `${count} ${one}${count === 1 ? '' : 's'}`;

/**
 * The changes from `before` (the latest released contract) to `after` (OpenAPI documents as data), the
 * level they need, the least version that level allows (`least`), and what is wrong with `after`'s
 * info.version. A version equal to the released one must have no change; a later one is a draft of the
 * next release.
 */
export function contractGate(before, after) {
  const changes = contractChanges(before, after);
  const level = changes.reduce((most, change) => (LEVELS.indexOf(LEVEL_OF[change.type]) > LEVELS.indexOf(most) ? LEVEL_OF[change.type] : most), 'none');
  const released = semver(before.info.version);
  const current = semver(after.info.version);
  const least = required(released, level).join('.');
  const problems = [];
  if (compare(current, released) < 0) problems.push(`info.version is ${after.info.version}, older than the released ${before.info.version}`);
  else if (compare(current, semver(least)) < 0) {
    const needing = changes.filter((change) => LEVEL_OF[change.type] === level).length;
    problems.push(
      `${plural(needing, level === 'major' ? 'breaking change' : `change`)} since the released ${before.info.version} (listed above) ${needing === 1 ? 'needs' : 'need'} a ${level} version: info.version must be ${least} or later, and it is ${after.info.version}`,
    );
  }
  const operations = Object.values(after.paths ?? {}).flatMap((item) => Object.keys(item ?? {}).filter((key) => METHODS.includes(key))).length;
  return { changes, level, least, operations, problems };
}

/**
 * The changelog entry of a release: its version, its date (or "draft": not released yet, with the version
 * its changes need) and its changes, breaking ones first; a change made at several operations is one line
 * that names them (or says "every operation", of the `operations` the contract has).
 */
export function changelogEntry(version, changes, { date, least, operations } = {}) {
  const order = ['breaking', 'deprecated', 'non-breaking', 'annotation', 'unclassified'];
  const titles = { breaking: 'Breaking', deprecated: 'Deprecated', 'non-breaking': 'Added or widened', annotation: 'Documentation', unclassified: 'Other' };
  const heading = date ? `## ${version} (${date})` : `## ${version} (draft: not released; its changes need ${least} or later)`;
  const lines = [heading, ''];
  const line = (description, places) => {
    const text = description[0].toUpperCase() + description.slice(1);
    if (places.size === 0) return `- ${text}`;
    return `- ${text}: ${places.size === operations ? 'every operation' : [...places].join(', ')}`;
  };
  for (const type of order) {
    const placesOf = new Map();
    for (const change of changes.filter((one) => one.type === type)) {
      const places = placesOf.get(change.description) ?? new Set();
      if (change.at) places.add(change.at);
      placesOf.set(change.description, places);
    }
    if (placesOf.size === 0) continue;
    lines.push(`### ${titles[type]}`, '', ...[...placesOf].map(([description, places]) => line(description, places)), '');
  }
  if (changes.length === 0) lines.push('No change to the contract.', '');
  return lines.join('\n');
}

/** The released versions, oldest first, from openapi/released/<version>.yaml. */
export function releasedVersions(directory = RELEASED) {
  return readdirSync(directory)
    .map((name) => /^(\d+\.\d+\.\d+)\.yaml$/.exec(name)?.[1])
    .filter(Boolean)
    .sort((a, b) => compare(semver(a), semver(b)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const versions = releasedVersions();
  const latest = versions.at(-1);
  const releasedText = readFileSync(`${RELEASED}${latest}.yaml`, 'utf8');
  const currentText = readFileSync(`${ROOT}openapi/user-records.yaml`, 'utf8');
  const [released, current] = [parse(releasedText), parse(currentText)];
  const client = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8'));
  const { changes, level, least, operations, problems } = contractGate(released, current);
  for (const version of versions) {
    const recorded = version === latest ? released.info.version : parse(readFileSync(`${RELEASED}${version}.yaml`, 'utf8')).info.version;
    if (recorded !== version)
      problems.push(`openapi/released/${version}.yaml holds info.version ${recorded}: a released contract's file is named by its version`);
  }
  if (current.info.version === latest && currentText !== releasedText)
    problems.push(`${latest} is released, and openapi/user-records.yaml differs from openapi/released/${latest}.yaml: a change needs a later version`);
  if (client.version !== current.info.version)
    problems.push(`client/package.json's version is ${client.version}; it must be the contract's info.version, ${current.info.version}`);
  const isReleased = versions.includes(current.info.version);
  const entry = changelogEntry(current.info.version, changes, { least, operations });
  // One line when the gate passes: the changes' entry, which can run to hundreds of lines, only on demand
  // (--entry, --release) or when it fails, where it shows what needs the version.
  const counts = Object.entries(Object.groupBy(changes, (change) => change.type)).map(([type, of]) => `${of.length} ${type}`);
  if (isReleased && changes.length === 0) console.log(`the contract is the released ${latest}`);
  else
    console.log(
      `the contract is a draft of ${current.info.version}: ${plural(changes.length, 'change')} since the released ${latest} (${counts.join(', ') || 'none'}) need ${level === 'none' ? 'no new' : `a ${level}`} version, ${least} or later${process.argv.includes('--entry') ? `:\n\n${entry}` : ' (--entry lists them)'}`,
    );
  if (problems.length > 0) {
    if (changes.length > 0 && !process.argv.includes('--entry')) console.error(`\n${entry}`);
    for (const problem of problems) console.error(`Breaking-change gate: ${problem}`);
    process.exit(1);
  }
  if (process.argv.includes('--release')) {
    if (isReleased) {
      console.error(`Breaking-change gate: ${current.info.version} is released already; move info.version to release again`);
      process.exit(1);
    }
    const date = new Date().toISOString().slice(0, 10);
    const changelog = `${ROOT}openapi/CHANGELOG.md`;
    const before = existsSync(changelog) ? readFileSync(changelog, 'utf8').replace(/^# .*\n\n/, '') : '';
    writeFileSync(changelog, `# Contract changelog\n\n${changelogEntry(current.info.version, changes, { date, operations })}\n${before}`);
    writeFileSync(`${RELEASED}${current.info.version}.yaml`, currentText, { flag: 'wx' });
    console.log(`released ${current.info.version}: openapi/CHANGELOG.md and openapi/released/${current.info.version}.yaml`);
  }
}
