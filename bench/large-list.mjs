// Benchmark, not a test: the time and the server's peak memory to list 12 to 1,000,000 users, on each
// database, each in a server process of its own that serves nothing else (so its peak RSS is the list's).
// Shape B streams the whole list; shape A pages through it (the last page, by its link, is the deepest), and wrk
// measures page 1 under load, whose cost must not grow with the store.
// Run by `make bench`; writes bench/results/large-list.{md,json}.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStore, fillStore, peakRssMiB, postgresReachable, root, startService, wrk } from './lib.mjs';

const SIZES = (process.env.BENCH_LIST_USERS ?? '12,100000,200000,1000000').split(',').map(Number);

async function timed(url) {
  const started = performance.now();
  const response = await fetch(url);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  return { ms: performance.now() - started, bytes, status: response.status };
}

async function measure(name, kind, users) {
  const store = await createStore(kind);
  const server = await startService(store.url);
  try {
    if (users > 12) await fillStore(store.url, users - 12);
    const rssBeforeMiB = peakRssMiB(server.pid);
    const full = await timed(`${server.url}/users`);
    const fullAgain = await timed(`${server.url}/users`);
    const firstPage = await timed(`${server.url}/api/users?page=1&per_page=100`);
    // Pages by number reach the first 10,000 users: the deepest page is the first page's link rel="last".
    const lastLink = (await fetch(`${server.url}/api/users?page=1&per_page=100`)).headers.get('link').match(/<([^>]+)>; rel="last"/)[1];
    const lastPage = await timed(`${server.url}${lastLink}`);
    const pageOne = `${server.url}/api/users?page=1&per_page=6`;
    wrk(pageOne, { seconds: 1 });
    const pageOneLoad = wrk(pageOne, { seconds: 4 });
    return {
      database: name,
      users,
      fullListMs: Math.min(full.ms, fullAgain.ms),
      fullListMiB: full.bytes / 2 ** 20,
      firstPageMs: firstPage.ms,
      lastPageMs: lastPage.ms,
      pageOneRps: pageOneLoad.rps,
      pageOneP99: pageOneLoad.p99,
      rssBeforeMiB,
      peakRssMiB: peakRssMiB(server.pid),
      statuses: [full.status, fullAgain.status, firstPage.status, lastPage.status],
    };
  } finally {
    await server.stop();
    await store.drop();
  }
}

const postgres = await postgresReachable();
if (!postgres) console.warn('PostgreSQL is not reachable: measured SQLite only');
const results = [];
for (const users of SIZES) {
  results.push(await measure('SQLite', 'sqlite', users));
  if (postgres) results.push(await measure('PostgreSQL', 'postgres', users));
}

const f = (n) => n.toFixed(1);
const table = [
  `Listing every user (${new Date().toISOString()}, Node ${process.version})`,
  '',
  '| database | users | GET /users (full list, streamed) | body | GET /api/users page 1 of 100 | last page of 100 | page 1 of 6 under load (wrk, 50 connections) | server RSS before | server peak RSS |',
  '|---|---:|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.database} | ${r.users.toLocaleString('en')} | ${f(r.fullListMs)} ms | ${f(r.fullListMiB)} MiB | ${f(r.firstPageMs)} ms | ${f(r.lastPageMs)} ms | ${r.pageOneRps.toFixed(0)} req/s, p99 ${f(r.pageOneP99)} ms | ${f(r.rssBeforeMiB)} MiB | ${f(r.peakRssMiB)} MiB |`,
  ),
  '',
].join('\n');
writeFileSync(join(root, 'bench/results/large-list.md'), table);
writeFileSync(join(root, 'bench/results/large-list.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(table);
