// Benchmark, not a test: searches (`q`) of every kind on SQLite at 1,000,000 users, one connection each (the
// time one search takes, not how many share the machine), and the slowest of them. The texts: those the
// substring index finds by an exact phrase or by its rarest trigrams, text every user holds, text no user
// holds, long addresses, and pieces of stored names and addresses picked at random (seeded, so every run asks
// the same). Text of one or two characters, which no trigram index narrows, is measured apart. Each request
// carries a query parameter of its own that the service ignores (`_`, a cache-buster): a complete search's
// reply is kept until the store changes, and the same URL again would measure the replies kept, not the search.
// Run by `make bench`; writes bench/results/searches.{md,json}.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStore, fillStore, root, startService, userRow, wrk } from './lib.mjs';
import { resultFile, updateDocsTables } from './tables.mjs';

const USERS = Number(process.env.BENCH_SEARCH_USERS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SEARCH_SECONDS ?? 2);
/** Cache-busters drawn from so many that a request meets a reply kept for its URL about never. */
const UNKEPT = 1_000_000_000;

const CHOSEN = [
  'mira99',
  'mir',
  'mira1',
  'mira9',
  'ann',
  'example',
  'example.com',
  '@example.com',
  'le.com',
  'last',
  'last1',
  'last999',
  'last1234',
  'ast99',
  'st12345',
  'user9999',
  'user1',
  '9@example',
  '0@example.com',
  '9999@example.com',
  'user12312@example.com',
  'tobias99',
  'xyz',
  'zzzzzzzzzzzz',
  'mira99last',
];

/** Pieces of stored names and addresses, 3 to 16 characters, from users picked by a seeded generator. */
function pieces(count) {
  let seed = 20261126;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  return Array.from({ length: count }, () => {
    const [, first, , last, , email] = userRow(next(USERS - 12), '');
    const field = [first, last, email][next(3)];
    const length = 3 + next(Math.min(14, field.length - 2));
    const start = next(field.length - length + 1);
    return field.slice(start, start + length);
  });
}

const store = await createStore('sqlite');
const server = await startService(store.url);
const rows = [];
try {
  await fillStore(store.url, USERS - 12);
  for (const q of [...new Set([...CHOSEN, ...pieces(25)])]) {
    const url = `${server.url}/users?q=${encodeURIComponent(q)}&limit=12`;
    const started = performance.now();
    const response = await fetch(url, { headers: { Connection: 'close' } });
    await response.arrayBuffer();
    const firstMs = performance.now() - started;
    const run = wrk(`${url}&_={id}`, { seconds: SECONDS, connections: 1, randomIds: UNKEPT });
    rows.push({ q, total: response.headers.get('x-total-count'), relation: response.headers.get('x-total-count-relation'), firstMs, ...run });
    console.log(
      `${q.padEnd(24)} first ${firstMs.toFixed(1).padStart(6)} ms  ${run.rps.toFixed(0).padStart(6)} req/s  p99 ${run.p99.toFixed(2)} ms  total ${rows.at(-1).total} ${rows.at(-1).relation}`,
    );
  }
  const short = wrk(`${server.url}/users?q=zq&limit=12&_={id}`, { seconds: SECONDS, connections: 1, randomIds: UNKEPT });
  rows.sort((a, b) => a.rps - b.rps);
  const line = (r) =>
    `| \`${r.q}\` | ${r.total}${r.relation === 'gte' ? '+' : ''} | ${r.firstMs.toFixed(1)} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} |`;
  const md = [
    `# Searches at ${USERS.toLocaleString('en')} users (SQLite)`,
    '',
    `One connection each (wrk -c1, ${SECONDS} s), a page of 12 in shape B, each request with a cache-buster of its own (\`&_=n\`: no reply kept serves it). Node ${process.version}. Slowest first.`,
    `Slowest of ${rows.length} texts of three characters or more: **${rows[0].rps.toFixed(0)} req/s** (\`${rows[0].q}\`).`,
    `Two letters (\`zq\`, which no trigram index narrows; it examines users under its budget): ${short.rps.toFixed(0)} req/s.`,
    '',
    '| q | matches | first request ms | req/s | p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(line),
    '',
  ].join('\n');
  writeFileSync(join(root, 'bench/results/searches.md'), md);
  writeFileSync(join(root, 'bench/results/searches.json'), `${JSON.stringify({ users: USERS, node: process.version, twoLetters: short, rows }, null, 2)}\n`);
  console.log(`slowest: ${rows[0].q} ${rows[0].rps.toFixed(0)} req/s`);
  // The goals of docs/benchmarks.md include the searches: rendered again with this run's.
  const bench = resultFile('bench.json');
  if (bench) updateDocsTables(join(root, 'docs/benchmarks.md'), bench);
} finally {
  await server.stop();
  await store.drop();
}
