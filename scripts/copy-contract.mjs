// The compiled server serves the contract's text at /openapi.yaml: ship it, and its sandbox variant, beside dist/server.
import { cpSync } from 'node:fs';
cpSync('openapi/user-records.yaml', 'dist/openapi/user-records.yaml');
cpSync('generated/user-records.sandbox.yaml', 'dist/generated/user-records.sandbox.yaml');
