// `make bench`: this service beside its ceilings and peers, in one run on one machine; results in
// bench/results/bench.{md,json,svg}. Not a test: it measures and reports, it asserts nothing.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { BASIC_AUTHORIZATION, createStore, ensureWrk, fillStore, peakRssMiB, postgresReachable, root, startProcess, startService, wrk } from './lib.mjs';
import { READS, readsOf, startJsonServer } from './peers.mjs';
import { renderChart } from './chart.mjs';
import { JSON_SERVER as JSON_SERVER_TARGET, renderGoals, renderSideBySide, SQLITE as SQLITE_TARGET, updateDocsTables } from './tables.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SIZES = (process.env.BENCH_SIZES ?? '12,100000,1000000').split(',').map(Number);
/**
 * From this size on, the full list (over 90 MB of JSON, measured on its own by large-list.mjs) and json-server's
 * writes (it rewrites its whole file for each) are left out: one of them outlasts the run.
 */
const HUGE = 1_000_000;
const results = [];

/** Runs one scenario against a running target and records it with the target's peak memory so far. */
function measure(target, server, scenario, size, path, options = {}) {
  // A second of warm-up, not recorded: the JIT and the caches of every target get the same start.
  wrk(`${server.url}${path}`, { ...options, seconds: 1 });
  const run = wrk(`${server.url}${path}`, { seconds: SECONDS, ...options });
  const row = { target, scenario, users: size, ...run, peakRssMiB: peakRssMiB(server.pid) };
  results.push(row);
  console.log(
    `${target.padEnd(22)} ${scenario.padEnd(26)} ${String(size).padStart(6)}  ${run.rps.toFixed(0).padStart(7)} req/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms  non-2xx ${run.non2xx}`,
  );
}

const shapeBBody = { firstName: 'Bench', lastName: 'Mark', email: 'bench.mark@example.com' };

async function ceilings() {
  const targets = [
    ['node:http ceiling', 'node-ceiling.mjs'],
    ['Koa ceiling', 'koa-ceiling.mjs'],
    // The same, each reply sent at the end of its event-loop turn as the service's reads are.
    ['Koa ceiling, replies per turn', 'koa-ceiling.mjs', { REPLIES: 'per-turn' }],
    // Koa with what every answer of the service must carry (headers, access log, metrics): see the file.
    ['Koa + obligations', 'koa-obligations.mjs'],
  ];
  for (const [target, file, env] of targets) {
    const server = await startProcess(process.execPath, () => [join(root, 'bench/targets', file)], env);
    measure(target, server, 'GET one user', 12, '/users/2');
    // The lists' replies with the same obligations: what their larger replies alone cost beside a GET's.
    if (file === 'koa-obligations.mjs') {
      measure(target, server, 'GET page (shape A)', 12, READS['GET page (shape A)'].service);
      measure(target, server, 'GET full list (shape B)', 12, READS['GET full list (shape B)'].service);
    }
    await server.stop();
  }
}

/** This service on one database: every scenario at 12 users, then reads, list and create as the store grows. */
async function service(kind) {
  const target = `this service (${kind})`;
  for (const size of SIZES) {
    const store = await createStore(kind);
    const server = await startService(store.url);
    try {
      if (size > 12) await fillStore(store.url, size - 12);
      measure(target, server, 'GET one user (shape A)', size, '/api/users/2');
      measure(target, server, 'GET one user (shape B)', size, READS['GET one user (shape B)'].service);
      // Every request a user of its own: past 256 users, kept replies rarely hold the one asked for.
      measure(target, server, 'GET one user, random ids (B)', size, '/users/{id}', { randomIds: size });
      // Page 1 must cost the same whatever the size of the store (its total is kept, not counted).
      measure(target, server, 'GET page (shape A)', size, READS['GET page (shape A)'].service);
      if (size === 12) {
        measure(target, server, 'GET protected resource', size, '/protected-resource', { headers: { Authorization: BASIC_AUTHORIZATION } });
        measure(target, server, 'PATCH a user (shape B)', size, '/users/2', { method: 'PATCH', body: { lastName: 'Patched' } });
        measure(target, server, 'PUT a user (shape B)', size, '/users/2', { method: 'PUT', body: shapeBBody });
      }
      // One connection for the lists that take seconds each: with more, none would end within the run.
      if (size < HUGE)
        measure(target, server, 'GET full list (shape B)', size, READS['GET full list (shape B)'].service, size >= 100_000 ? { connections: 1 } : {});
      // The list vocabulary: a page by cursor from the middle of the store, sorted, by address, and a search
      // that matches few users (the trigram index answers it while one of its trigrams is rare).
      const middle = Buffer.from(JSON.stringify([1, 'id', 'a', [Math.floor(size / 2)]])).toString('base64url');
      measure(target, server, 'GET cursor page of 12 (B)', size, `/users?limit=12&cursor=${middle}`);
      measure(target, server, 'GET sorted page of 12 (B)', size, READS['GET sorted page of 12 (B)'].service);
      measure(target, server, 'GET by email (B)', size, READS['GET by email (B)'].service);
      const searchConnections = size >= HUGE ? { connections: 1 } : size >= 100_000 ? { connections: 10 } : {};
      // The same text again is answered from the replies kept (as every client of a frontend asking for it
      // is); a new text each time measures what a search costs the store.
      measure(target, server, 'GET search page of 12 (B)', size, '/users?q=mira99&limit=12', searchConnections);
      measure(target, server, 'GET search, new text each time (B)', size, '/users?q=mira{id}&limit=12', { ...searchConnections, randomIds: 1_000_000 });
      // Two letters are fewer than a trigram: the index cannot answer, and the search examines every user;
      // each request with a cache-buster of its own (`_`, which the service ignores), so none is kept.
      measure(target, server, 'GET 2-letter search (B)', size, '/users?q=zq&limit=12&_={id}', { ...searchConnections, randomIds: 1_000_000_000 });
      measure(target, server, 'POST a user (shape B)', size, '/users', { method: 'POST', body: shapeBBody });
    } finally {
      await server.stop();
      await store.drop();
    }
  }
}

/**
 * Scaling with WORKERS (GET one user, POST a user): whether reads spread over the workers and writes keep up
 * with one writer for all of them. On a machine with fewer cores than workers (and wrk on one of them), the
 * rows measure what more workers cost there, not how far they scale.
 */
async function workers(kind, counts) {
  for (const count of counts) {
    const store = await createStore(kind);
    const server = await startService(store.url, [], { WORKERS: String(count) });
    try {
      const target = `this service (${kind}, WORKERS=${count})`;
      measure(target, server, 'GET one user (shape B)', 12, '/users/2');
      measure(target, server, 'POST a user (shape B)', 12, '/users', { method: 'POST', body: shapeBBody });
    } finally {
      await server.stop();
      await store.drop();
    }
  }
}

async function jsonServer() {
  for (const size of SIZES) {
    const server = await startJsonServer(size);
    try {
      measure(JSON_SERVER_TARGET, server, 'GET one user (shape B)', size, READS['GET one user (shape B)'].jsonServer);
      measure(JSON_SERVER_TARGET, server, 'GET one user, random ids (B)', size, '/users/{id}', { randomIds: size });
      // json-server 1.0 pages with _page and _per_page, and counts its items for every page.
      measure(JSON_SERVER_TARGET, server, 'GET page (shape A)', size, READS['GET page (shape A)'].jsonServer);
      if (size === 12) {
        measure(JSON_SERVER_TARGET, server, 'PUT a user (shape B)', size, '/users/2', { method: 'PUT', body: shapeBBody });
        measure(JSON_SERVER_TARGET, server, 'PATCH a user (shape B)', size, '/users/2', { method: 'PATCH', body: { lastName: 'Patched' } });
      }
      if (size < HUGE)
        measure(
          JSON_SERVER_TARGET,
          server,
          'GET full list (shape B)',
          size,
          READS['GET full list (shape B)'].jsonServer,
          size >= 100_000 ? { connections: 10 } : {},
        );
      // json-server has no cursor and no search; it sorts with _sort and filters by equality.
      measure(JSON_SERVER_TARGET, server, 'GET sorted page of 12 (B)', size, READS['GET sorted page of 12 (B)'].jsonServer);
      measure(JSON_SERVER_TARGET, server, 'GET by email (B)', size, READS['GET by email (B)'].jsonServer);
      if (size < HUGE) measure(JSON_SERVER_TARGET, server, 'POST a user (shape B)', size, '/users', { method: 'POST', body: shapeBBody });
    } finally {
      await server.stop();
    }
  }
}

async function prismMock() {
  const target = 'Prism 5.14 mock';
  const prismCli = join(root, 'node_modules/@stoplight/prism-cli/dist/index.js');
  const server = await startProcess(process.execPath, (port) => [
    prismCli,
    'mock',
    join(root, 'openapi/user-records.yaml'),
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
  ]);
  try {
    measure(target, server, 'GET one user (shape A)', 12, '/api/users/2');
    measure(target, server, 'GET one user (shape B)', 12, '/users/2');
    measure(target, server, 'POST a user (shape B)', 12, '/users', { method: 'POST', body: shapeBBody });
    measure(target, server, 'GET protected resource', 12, '/protected-resource', { headers: { Authorization: BASIC_AUTHORIZATION } });
  } finally {
    await server.stop();
  }
}

/** Rounds of the side-by-side measurement, and seconds of each measurement in it (after a second of warm-up). */
const SIDE_BY_SIDE_ROUNDS = Number(process.env.BENCH_SIDE_BY_SIDE_ROUNDS ?? 5);
const SIDE_BY_SIDE_SECONDS = Number(process.env.BENCH_SIDE_BY_SIDE_SECONDS ?? 3);
const sideBySide = [];

/**
 * The reads the goals compare (issue 29), measured side by side: Koa's ceiling, Koa with the obligations,
 * this service on SQLite and json-server, at 12 users, all running at once and each scenario measured on each
 * in turn, for several rounds (each starting elsewhere); a goal's ratio is of the medians. The
 * machine's speed drifts within a run (in one, the ceilings measured first ran at half their speed of the day
 * before while the service, minutes later, ran at its usual speed: the service at 1.09 times its own
 * obligations): measured in turns, a ratio compares the same minutes.
 */
async function sideBySideReads() {
  const store = await createStore('sqlite');
  const started = [];
  /** A target started, stopped with the others however the measurement ends. */
  const running = async (starting) => {
    const server = await starting;
    started.push(server);
    return server;
  };
  try {
    const targets = [
      {
        target: 'Koa ceiling',
        server: await running(startProcess(process.execPath, () => [join(root, 'bench/targets/koa-ceiling.mjs')])),
        scenarios: [['GET one user', '/users/2']],
      },
      {
        target: 'Koa ceiling, replies per turn',
        server: await running(startProcess(process.execPath, () => [join(root, 'bench/targets/koa-ceiling.mjs')], { REPLIES: 'per-turn' })),
        scenarios: [['GET one user', '/users/2']],
      },
      {
        target: 'Koa + obligations',
        server: await running(startProcess(process.execPath, () => [join(root, 'bench/targets/koa-obligations.mjs')])),
        scenarios: [
          ['GET one user', '/users/2'],
          ['GET page (shape A)', READS['GET page (shape A)'].service],
          ['GET full list (shape B)', READS['GET full list (shape B)'].service],
        ],
      },
      {
        target: SQLITE_TARGET,
        server: await running(startService(store.url)),
        scenarios: readsOf('service'),
      },
      {
        target: JSON_SERVER_TARGET,
        server: await running(startJsonServer(12)),
        scenarios: readsOf('jsonServer'),
      },
    ];
    const runs = new Map();
    for (let round = 1; round <= SIDE_BY_SIDE_ROUNDS; round++) {
      // Each round starts at another target, and each target at another scenario, so that none is always
      // measured first (or just after the same one).
      const turn = targets.map((_, i) => targets[(i + round) % targets.length]);
      for (const { target, server, scenarios } of turn) {
        for (const [scenario, path] of scenarios.map((_, i) => scenarios[(i + round) % scenarios.length])) {
          wrk(`${server.url}${path}`, { seconds: 1 });
          const run = wrk(`${server.url}${path}`, { seconds: SIDE_BY_SIDE_SECONDS });
          const key = `${target}\u0000${scenario}`;
          runs.set(key, [...(runs.get(key) ?? []), run.rps]);
          console.log(`side by side, round ${round}: ${target.padEnd(26)} ${scenario.padEnd(26)} ${run.rps.toFixed(0).padStart(7)} req/s`);
        }
      }
    }
    for (const [key, rounds] of runs) {
      const [target, scenario] = key.split('\u0000');
      const sorted = [...rounds].sort((a, b) => a - b);
      sideBySide.push({ target, scenario, users: 12, rps: sorted[Math.floor(sorted.length / 2)], rounds });
    }
  } finally {
    for (const server of started) await server.stop();
    await store.drop();
  }
}

ensureWrk();
if (!existsSync(join(root, 'dist/server/main.js'))) throw new Error('Run `make build` first (make bench does).');
await sideBySideReads();
await ceilings();
await service('sqlite');
await workers('sqlite', [1, 2, 4, 8]);
if (await postgresReachable()) {
  await service('postgres');
  await workers('postgres', [1, 4]);
} else console.warn('PostgreSQL is not reachable: this service is measured on SQLite only');
await jsonServer();
await prismMock();

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, wrk -t1 -c50 -d${SECONDS}s on loopback`;
const f = (n, digits = 1) => n.toFixed(digits);
const table = [
  `Run ${new Date().toISOString()}: ${machine}.`,
  '',
  '| target | scenario | users | req/s | p50 ms | p99 ms | non-2xx | peak RSS MiB |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.target} | ${r.scenario} | ${r.users.toLocaleString('en')} | ${f(r.rps, 0)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${r.non2xx} | ${f(r.peakRssMiB)} |`,
  ),
  '',
  `Side by side at 12 users (issue 29's reads): medians of ${SIDE_BY_SIDE_ROUNDS} rounds of ${SIDE_BY_SIDE_SECONDS} s, each scenario measured on each target in turn:`,
  '',
  renderSideBySide(sideBySide),
  '',
  'The goals of a cheaper request (issue 29), read off this run (ratios of reads from the side-by-side medians):',
  '',
  renderGoals(results, undefined, sideBySide),
  '',
].join('\n');
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/bench.md'), table);
const run = { machine, seconds: SECONDS, results, sideBySide };
writeFileSync(join(root, 'bench/results/bench.json'), `${JSON.stringify(run, null, 2)}\n`);
writeFileSync(join(root, 'bench/results/bench.svg'), renderChart(results));
updateDocsTables(join(root, 'docs/benchmarks.md'), run);
console.log(`\n${table}\nWrote bench/results/bench.md, bench.json and bench.svg`);
