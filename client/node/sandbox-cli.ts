#!/usr/bin/env node
// The `user-records-sandbox` command (npx user-records-sandbox --help for its options).
import { main } from './sandbox.js';

await main();
