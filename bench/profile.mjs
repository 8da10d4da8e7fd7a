// `[BENCH_AUTH=1] node bench/profile.mjs [path] [method]`: drives one request of this service with wrk while
// the server runs under --cpu-prof, then prints where the CPU time went (self time by function). The profile
// is kept in bench/.profiles/ for Chrome DevTools. Not part of make bench: a tool for finding the next waste
// to remove.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASIC_AUTHORIZATION, createStore, ensureWrk, root, startService, wrk } from './lib.mjs';

const path = process.argv[2] ?? '/users/2';
const method = process.argv[3] ?? 'GET';
const kind = process.env.BENCH_STORE ?? 'sqlite';
const body = method === 'GET' ? undefined : { firstName: 'Bench', lastName: 'Mark', email: 'bench.mark@example.com' };
// BENCH_AUTH=1 sends the bench's Basic credentials (the protected resource).
const headers = process.env.BENCH_AUTH ? { Authorization: BASIC_AUTHORIZATION } : {};
const profiles = join(root, 'bench/.profiles');
mkdirSync(profiles, { recursive: true });

ensureWrk();
const store = await createStore(kind);
const server = await startService(store.url, ['--cpu-prof', `--cpu-prof-dir=${profiles}`], process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {});
const before = new Set(readdirSync(profiles));
try {
  wrk(`${server.url}${path}`, { method, body, headers, seconds: 1 });
  const run = wrk(`${server.url}${path}`, { method, body, headers, seconds: Number(process.env.BENCH_SECONDS ?? 5) });
  console.log(`${method} ${path} on ${kind}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, non-2xx ${run.non2xx}`);
} finally {
  await server.stop();
  await store.drop();
}

const file = readdirSync(profiles).find((name) => !before.has(name) && name.endsWith('.cpuprofile'));
if (!file) throw new Error('the server wrote no profile');
const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(join(profiles, file), 'utf8'));
const byId = new Map(nodes.map((node) => [node.id, node]));
const self = new Map();
samples.forEach((id, i) => {
  const { callFrame } = byId.get(id);
  const where = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '')}:${callFrame.lineNumber + 1}`;
  self.set(where, (self.get(where) ?? 0) + (timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log(`\nself time, top 40 of ${(total / 1e6).toFixed(1)} s (bench/.profiles/${file}):`);
for (const [where, time] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${((100 * time) / total).toFixed(1).padStart(5)}%  ${where}`);
}

// Total time: a function's own time and that of everything it called (each function counted once per stack,
// so recursion does not count twice). Shows which layer a request's time goes through, where self time shows
// only where it ends.
const parent = new Map();
for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const inclusive = new Map();
samples.forEach((id, i) => {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const { callFrame } = byId.get(at);
    if (!callFrame.url) continue;
    const where = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '')}:${callFrame.lineNumber + 1}`;
    if (seen.has(where)) continue;
    seen.add(where);
    inclusive.set(where, (inclusive.get(where) ?? 0) + (timeDeltas[i] ?? 0));
  }
});
console.log(`\ntotal time, top 50:`);
for (const [where, time] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 50)) {
  console.log(`${((100 * time) / total).toFixed(1).padStart(5)}%  ${where}`);
}
