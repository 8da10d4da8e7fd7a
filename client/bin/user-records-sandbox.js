#!/usr/bin/env node
// The `user-records-sandbox` command (npx user-records-sandbox --help for its options). It is plain
// JavaScript in the source tree, so that npm finds the bin when it first reads package.json, before prepack
// builds dist/ (a bin whose file is missing then is dropped from the published package).
import { main } from '../dist/client/node/sandbox.js';

await main();
