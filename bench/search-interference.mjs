// Benchmark, not a test: what 32 worst-case searches at once cost everybody else, on PostgreSQL at 1,000,000
// users. The search is the list audit's worst: `q=.castellan.9`, a word many users hold (every Castellan) whose
// whole few do (9,272), asked as a complete list (shape B without a limit). A reader asks for one user
// (`GET /api/users/3`) on its own, then while 32 clients each ask the search over and over; its p99 is read by
// wrk, on a light load (one connection) and on a heavy one (50). Two instances share the store, as behind the
// proxy: the reader asks the instance the searches go to, and the other one.
// Run by `make bench`; writes bench/results/search-interference.{md,json}.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { seedVariedUsers } from '../tests/support/bulk-seed.ts';
import { createStore, ensureWrk, postgresReachable, root, startService, wrk } from './lib.mjs';

const USERS = Number(process.env.BENCH_INTERFERENCE_USERS ?? 1_000_000);
const SEARCHERS = Number(process.env.BENCH_INTERFERENCE_SEARCHERS ?? 32);
const SECONDS = Number(process.env.BENCH_INTERFERENCE_SECONDS ?? 10);
const SEARCH = '/users?q=.castellan.9';

/**
 * Clients that each ask `url` again as soon as its answer is read, until stopped; counts what they got. They run
 * on a thread of their own: wrk runs synchronously on the main one.
 */
function searchers(url, count) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, count } });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

if (!isMainThread) {
  const { url, count } = workerData;
  let going = true;
  const done = [];
  const statuses = {};
  // Each client from an address of its own (127.0.0.x), as 32 users would be: one address's searches beyond
  // its share of the queue are refused (SEARCH_QUEUE_PER_CLIENT), and would measure refusals, not searches.
  const ask = (agent) =>
    new Promise((resolve) => {
      const request = http.get(url, { agent }, (response) => response.resume().once('end', () => resolve(response.statusCode)));
      request.once('error', (error) => resolve(error.code ?? error.message));
    });
  const loops = Array.from({ length: count }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, localAddress: `127.0.0.${10 + i}` });
    while (going) {
      const started = performance.now();
      const status = await ask(agent);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 200) done.push(performance.now() - started);
    }
    agent.destroy();
  });
  parentPort.once('message', async () => {
    going = false;
    await Promise.all(loops);
    done.sort((a, b) => a - b);
    parentPort.postMessage({ statuses, completed: done.length, medianMs: done[Math.floor(done.length / 2)] ?? NaN });
    parentPort.close();
  });
} else {
  if (!(await postgresReachable())) {
    console.log('search interference: PostgreSQL is not reachable; skipped');
    process.exit(0);
  }
  ensureWrk();
  const store = await createStore('postgres');
  const searched = await startService(store.url);
  const other = await startService(store.url);
  const rows = [];
  try {
    await seedVariedUsers({ url: store.url }, USERS - 12);
    const total = await fetch(`${searched.url}${SEARCH}&limit=1`).then((r) => r.headers.get('x-total-count'));
    for (const connections of [1, 50]) {
      for (const [instance, server] of [
        ['same', searched],
        ['other', other],
      ]) {
        const url = `${server.url}/api/users/3`;
        const idle = wrk(url, { seconds: SECONDS, connections });
        const load = searchers(`${searched.url}${SEARCH}`, SEARCHERS);
        const loaded = wrk(url, { seconds: SECONDS, connections });
        const searches = await load.stop();
        rows.push({ connections, instance, idle, loaded, searches });
        console.log(
          `c${connections} ${instance}: p99 ${idle.p99.toFixed(1)} -> ${loaded.p99.toFixed(1)} ms (${(loaded.p99 / idle.p99).toFixed(1)}x), ` +
            `${idle.rps.toFixed(0)} -> ${loaded.rps.toFixed(0)} req/s; searches ${JSON.stringify(searches.statuses)}, median ${searches.medianMs.toFixed(0)} ms`,
        );
      }
    }
    const f = (n) => n.toFixed(1);
    const md = [
      `# Reads beside ${SEARCHERS} worst-case searches (PostgreSQL, ${USERS.toLocaleString('en')} users)`,
      '',
      `\`GET /api/users/3\` by wrk for ${SECONDS} s, alone and while ${SEARCHERS} clients each ask \`${SEARCH}\` (${total} matches, a complete list) again as soon as it is answered, each from an address of its own. Two instances on one store; the reader asks the instance the searches go to, or the other one. Node ${process.version}.`,
      '',
      '| reader | instance | p99 alone ms | p99 beside searches ms | ratio | req/s alone | req/s beside | searches answered 200 | their median ms | other answers |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...rows.map((r) => {
        const others =
          Object.entries(r.searches.statuses)
            .filter(([status]) => status !== '200')
            .map(([status, n]) => `${n}× ${status}`)
            .join(', ') || 'none';
        return `| ${r.connections} connection${r.connections > 1 ? 's' : ''} | ${r.instance} | ${f(r.idle.p99)} | ${f(r.loaded.p99)} | ${(r.loaded.p99 / r.idle.p99).toFixed(1)}x | ${r.idle.rps.toFixed(0)} | ${r.loaded.rps.toFixed(0)} | ${r.searches.completed} | ${r.searches.medianMs.toFixed(0)} | ${others} |`;
      }),
      '',
    ].join('\n');
    writeFileSync(join(root, 'bench/results/search-interference.md'), md);
    writeFileSync(
      join(root, 'bench/results/search-interference.json'),
      `${JSON.stringify({ users: USERS, searchers: SEARCHERS, node: process.version, rows }, null, 2)}\n`,
    );
  } finally {
    await Promise.all([searched.stop(), other.stop()]);
    await store.drop();
  }
}
