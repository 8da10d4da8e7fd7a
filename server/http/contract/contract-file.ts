import { fileURLToPath } from 'node:url';

/** The contract file in the source tree and, after `npm run build`, beside the compiled server (for /openapi.yaml and Prism). */
export const CONTRACT_FILE = fileURLToPath(new URL('../../../openapi/user-records.yaml', import.meta.url));
