// The peers the benchmarks compare this service with: json-server, started on users of its own, and the reads
// the goals compare as each side asks for them. Used by run.mjs and ablation.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, startProcess } from './lib.mjs';

const JSON_SERVER = 'json-server@1.0.0-beta.15';
const PEERS = join(root, 'bench/.peers');
/**
 * The reads the goals compare (issue 29), each as this service and json-server ask for it: measured in the
 * rows of each and side by side.
 */
export const READS = {
  'GET one user (shape B)': { service: '/users/2', jsonServer: '/users/2' },
  'GET page (shape A)': { service: '/api/users?page=1&per_page=6', jsonServer: '/users?_page=1&_per_page=6' },
  'GET full list (shape B)': { service: '/users', jsonServer: '/users' },
  'GET sorted page of 12 (B)': { service: '/users?sort=-lastName&limit=12', jsonServer: '/users?_sort=-lastName&_page=1&_per_page=12' },
  'GET by email (B)': { service: '/users?email=USER5@example.com', jsonServer: '/users?email=user5@example.com' },
};
export const readsOf = (side) => Object.entries(READS).map(([scenario, paths]) => [scenario, paths[side]]);

function installJsonServer() {
  if (existsSync(join(PEERS, 'node_modules/.bin/json-server'))) return;
  mkdirSync(PEERS, { recursive: true });
  execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', PEERS, JSON_SERVER], { stdio: 'inherit' });
}

/** json-server serving `size` users from a file of its own; `stop` also removes the file. */
export async function startJsonServer(size) {
  installJsonServer();
  const dir = mkdtempSync(join(tmpdir(), 'json-server-'));
  const users = Array.from({ length: size }, (_, i) => ({ id: String(i + 1), firstName: `First${i}`, lastName: `Last${i}`, email: `user${i}@example.com` }));
  writeFileSync(join(dir, 'db.json'), JSON.stringify({ users }));
  const server = await startProcess(join(PEERS, 'node_modules/.bin/json-server'), (port) => [join(dir, 'db.json'), '--port', String(port)]);
  return { ...server, stop: () => server.stop().then(() => execFileSync('rm', ['-rf', dir])) };
}
