#!/usr/bin/env node
// The client package's prepublishOnly (it runs from client/, with Node's own modules only, so publishing
// needs no root install): the package publishes only a released contract. Its version must have
// openapi/released/<version>.yaml (make release-contract), and openapi/user-records.yaml must be that file,
// byte for byte: a package at a version carries the one contract that version names, for good.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { name, version } = JSON.parse(readFileSync(`${ROOT}client/package.json`, 'utf8'));
const released = `openapi/released/${version}.yaml`;
const refuse = (why) => {
  console.error(`${name}@${version} is not published: ${why}`);
  process.exit(1);
};
if (!existsSync(`${ROOT}${released}`))
  refuse(`${version} is not a released contract (no ${released}); run \`make release-contract\` when the contract is final`);
if (readFileSync(`${ROOT}${released}`, 'utf8') !== readFileSync(`${ROOT}openapi/user-records.yaml`, 'utf8'))
  refuse(`openapi/user-records.yaml differs from ${released}, the contract released as ${version}; a changed contract needs a new version`);
console.log(`${name}@${version}: the contract is the released ${released}`);
