// Benchmark, not a test: the time and the server's peak memory to list 200,000 users, on each database.
// Shape B streams the whole list; shape A pages through it (the last page is the deepest offset).
// Run by `make bench`; writes bench/results/large-list.{md,json}.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStore, fillStore, peakRssMiB, postgresReachable, root, startService } from './lib.mjs';

const USERS = Number(process.env.BENCH_LIST_USERS ?? 200_000);

async function timed(url) {
  const started = performance.now();
  const response = await fetch(url);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  return { ms: performance.now() - started, bytes, status: response.status };
}

async function measure(name, kind) {
  const store = await createStore(kind);
  const server = await startService(store.url);
  try {
    await fillStore(store.url, USERS - 12);
    const rssBeforeMiB = peakRssMiB(server.pid);
    const full = await timed(`${server.url}/users`);
    const fullAgain = await timed(`${server.url}/users`);
    const firstPage = await timed(`${server.url}/api/users?page=1&per_page=100`);
    const lastPage = await timed(`${server.url}/api/users?page=${USERS / 100}&per_page=100`);
    return {
      database: name, users: USERS, fullListMs: Math.min(full.ms, fullAgain.ms), fullListMiB: full.bytes / 2 ** 20,
      firstPageMs: firstPage.ms, lastPageMs: lastPage.ms, rssBeforeMiB, peakRssMiB: peakRssMiB(server.pid),
      statuses: [full.status, fullAgain.status, firstPage.status, lastPage.status],
    };
  } finally {
    await server.stop();
    await store.drop();
  }
}

const results = [await measure('SQLite', 'sqlite')];
if (await postgresReachable()) results.push(await measure('PostgreSQL', 'postgres'));
else console.warn('PostgreSQL is not reachable: measured SQLite only');

const f = (n) => n.toFixed(1);
const table = [
  `Listing ${USERS.toLocaleString('en')} users (${new Date().toISOString()}, Node ${process.version})`,
  '',
  '| database | GET /users (full list, streamed) | body | GET /api/users page 1 | last page | server RSS before | server peak RSS |',
  '|---|---|---|---|---|---|---|',
  ...results.map((r) => `| ${r.database} | ${f(r.fullListMs)} ms | ${f(r.fullListMiB)} MiB | ${f(r.firstPageMs)} ms | ${f(r.lastPageMs)} ms | ${f(r.rssBeforeMiB)} MiB | ${f(r.peakRssMiB)} MiB |`),
  '',
].join('\n');
writeFileSync(join(root, 'bench/results/large-list.md'), table);
writeFileSync(join(root, 'bench/results/large-list.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(table);
