// The compiled server reads the contract at start-up (request validation): ship it beside dist/server.
import { cpSync } from 'node:fs';
cpSync('openapi/user-records.yaml', 'dist/openapi/user-records.yaml');
