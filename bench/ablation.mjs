// `make bench`: what the service loses without each of its bespoke performance parts (issue 46), and the
// floors the whole must hold, in one interleaved run; results in bench/results/ablation.{md,json} and the
// table of docs/benchmarks.md. Not a test: it measures and reports, it asserts nothing.
//
// Each part is taken out by a patch in bench/ablations/ (its first lines say what it removes and what the
// part exists for), applied to a copy of this tree and built there: the service's code carries no switch for
// it. Every round measures each part's rows on the service with it and on the copy without, in turns whose
// order alternates, then the floors: Koa's hello, this service and json-server on the goals' reads.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createStore, ensureWrk, fillStore, peakRssMiB, root, startProcess, startService, wrk, wrkInBackground } from './lib.mjs';
import { READS, readsOf, startJsonServer } from './peers.mjs';
import { writeBetweenMarkers } from './tables.mjs';

const ROUNDS = Number(process.env.ABLATION_ROUNDS ?? 3);
const SECONDS = Number(process.env.ABLATION_SECONDS ?? 4);
/** Users of the large store: more than the reply cache's 256 replies hold. */
const LARGE = 100_000;
/**
 * How much later each sync returns on the slow disk (strace holds the service's fsync and fdatasync): about
 * what a sync costs on network block storage, where this machine's local disk syncs in a fraction of it.
 */
const SLOW_SYNC_MS = 2;
/** Least gain on a row it exists for that keeps a part (issue 46). */
const KEEP_GAIN = 0.05;
const FLOORS = { koa: 0.6, jsonServer: 1.5 };
/** Seconds each floor target serves its reads before the first is measured. */
const FLOOR_WARM_UP_SECONDS = 5;
const PATCHES = join(root, 'bench/ablations');

const shapeBBody = { firstName: 'Bench', lastName: 'Mark', email: 'bench.mark@example.com' };
/** The rows, each on a store of 12 users (small), of LARGE users (large), or of 12 users on a slow disk (slow-sync). */
const ROWS = {
  'GET one user (B)': { store: 'small', path: '/users/2' },
  'GET one user (B), 1 connection': { store: 'small', path: '/users/2', connections: 1 },
  'GET page (A)': { store: 'small', path: READS['GET page (shape A)'].service },
  'GET full list (B)': { store: 'small', path: '/users' },
  'GET search, new text each time (B)': { store: 'small', path: '/users?q=mira{id}&limit=12', randomIds: 1_000_000 },
  'POST a user (B)': { store: 'small', path: '/users', method: 'POST', body: shapeBBody },
  'PUT a user (B)': { store: 'small', path: '/users/2', method: 'PUT', body: shapeBBody },
  'POST a user (B), slow disk': { store: 'slow-sync', path: '/users', method: 'POST', body: shapeBBody },
  // Reads while 10 connections create users: whether a commit's wait for the disk holds them.
  'GET one user beside creates (B), slow disk': {
    store: 'slow-sync',
    path: '/users/2',
    beside: { path: '/users', method: 'POST', body: shapeBBody, connections: 10 },
  },
  'GET one user, random ids (B)': { store: 'large', path: '/users/{id}', randomIds: LARGE },
  // Pages by number reach the first 10,000 users (page × per_page ≤ 10,000): 1,666 pages, more than the replies cached.
  'GET page, random pages (A)': { store: 'large', path: '/api/users?page={id}&per_page=6', randomIds: 1_666 },
  // Reads while 10 connections search for two letters (fewer than a trigram: each search examines every user).
  'GET one user beside 2-letter searches (B)': {
    store: 'large',
    path: '/users/{id}',
    randomIds: LARGE,
    beside: { path: '/users?q=zq&limit=12&_={id}', randomIds: 1_000_000_000, connections: 10 },
  },
};

/** Each part, the patch that takes it out, the rows it exists for, and what of them judges it. */
const ALL_PARTS = [
  { part: 'reply cache', patch: 'reply-cache', rows: ['GET one user (B)', 'GET page (A)', 'GET full list (B)'], judged: ['rps'] },
  { part: 'per-turn sending', patch: 'per-turn-sending', rows: ['GET one user (B)', 'GET page (A)', 'GET one user, random ids (B)'], judged: ['rps', 'p99'] },
  {
    part: 'compiled-query caches',
    patch: 'compiled-queries',
    rows: ['GET one user, random ids (B)', 'GET page, random pages (A)', 'POST a user (B)', 'GET search, new text each time (B)'],
    judged: ['rps'],
  },
  {
    part: 'prepared-statement cache',
    patch: 'statement-cache',
    rows: ['GET one user, random ids (B)', 'POST a user (B)', 'GET search, new text each time (B)'],
    judged: ['rps'],
  },
  { part: 'group commit', patch: 'group-commit', rows: ['POST a user (B)', 'PUT a user (B)', 'POST a user (B), slow disk'], judged: ['rps', 'p99'] },
  { part: 'writer thread', patch: 'writer-thread', rows: ['POST a user (B)', 'PUT a user (B)', 'GET one user beside creates (B), slow disk'], judged: ['p99'] },
  { part: 'search turnstile', patch: 'search-turnstile', rows: ['GET one user beside 2-letter searches (B)'], judged: ['p99'] },
  { part: 'heap flags', patch: 'heap-flags', rows: ['GET one user (B)', 'POST a user (B)'], judged: ['rss'] },
];

// ABLATION_PARTS=patch,... measures only those parts (to try one out); make bench measures every one.
const chosen = process.env.ABLATION_PARTS?.split(',');
const PARTS = chosen ? ALL_PARTS.filter(({ patch }) => chosen.includes(patch)) : ALL_PARTS;

/**
 * A copy of this tree as it is (its tracked files, committed or not) with `patch` applied, built. Its
 * node_modules is this tree's, linked: nothing installs there, only tsc and esbuild run.
 */
function builtCopy(patch) {
  const tree = mkdtempSync(join(tmpdir(), `ablation-${patch ?? 'whole'}-`));
  execFileSync('sh', ['-c', `git ls-files -z | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C '${tree}'`], { cwd: root });
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  if (patch) execFileSync('git', ['apply', join(PATCHES, `${patch}.patch`)], { cwd: tree });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: tree, stdio: 'inherit' });
  return tree;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** One wrk run of a row, after a second of warm-up; with `beside`, while that load runs too. */
async function measureRow(url, row) {
  const options = { method: row.method, body: row.body, connections: row.connections, randomIds: row.randomIds };
  const besides = row.beside && wrkInBackground(`${url}${row.beside.path}`, { ...row.beside, seconds: SECONDS + 2 });
  wrk(`${url}${row.path}`, { ...options, seconds: 1 });
  const run = wrk(`${url}${row.path}`, { ...options, seconds: SECONDS });
  // No reply within the run: its latency is longer than the run, whatever wrk prints.
  if (run.requests === 0) Object.assign(run, { p50: Infinity, p99: Infinity });
  return { ...run, ...(besides ? { besideRps: (await besides).rps } : {}) };
}

/** strace running the service, every sync it calls returning SLOW_SYNC_MS late; only those calls stop it (seccomp). */
const SLOW_DISK = [
  'strace',
  '--seccomp-bpf',
  '-f',
  '-e',
  'trace=fsync,fdatasync',
  '-e',
  `inject=fsync,fdatasync:delay_exit=${SLOW_SYNC_MS * 1000}`,
  '-o',
  '/dev/null',
];

/** The given rows on the built tree `tree`, each store's on a service of its own: each run, and each service's peak RSS. */
async function measureRows(tree, rows) {
  const runs = {};
  const peaks = {};
  for (const store of ['small', 'large', 'slow-sync']) {
    // Writes last: the users they add would change what the reads before them read.
    const mine = rows.filter((name) => ROWS[name].store === store).sort((a, b) => Number(ROWS[a].method !== undefined) - Number(ROWS[b].method !== undefined));
    if (mine.length === 0) continue;
    const created = await createStore('sqlite');
    const under = store === 'slow-sync' ? SLOW_DISK : [];
    const server = await startService(created.url, [], {}, { tree, under });
    try {
      if (store === 'large') await fillStore(created.url, LARGE - 12);
      for (const name of mine) runs[name] = await measureRow(server.url, ROWS[name]);
      peaks[store] = peakRssMiB(server.pid);
    } finally {
      await server.stop();
      await created.drop();
    }
  }
  return { runs, peakRssMiB: Math.max(...Object.values(peaks)) };
}

/** Starts Koa's hello, this service (whole) and json-server for the floors; `stop` stops them all. */
async function floorTargets(whole) {
  const store = await createStore('sqlite');
  const koa = await startProcess(process.execPath, () => [join(root, 'bench/targets/koa-ceiling.mjs')]);
  const service = await startService(store.url, [], {}, { tree: whole });
  const jsonServer = await startJsonServer(12);
  return {
    targets: [
      { target: 'Koa ceiling', server: koa, scenarios: [['GET one user (shape B)', '/users/2']] },
      { target: 'this service', server: service, scenarios: readsOf('service') },
      { target: 'json-server', server: jsonServer, scenarios: readsOf('jsonServer') },
    ],
    stop: async () => {
      for (const server of [koa, service, jsonServer]) await server.stop();
      await store.drop();
    },
  };
}

ensureWrk();
const trees = [];
process.once('exit', () => {
  for (const tree of trees) rmSync(tree, { recursive: true, force: true });
});
const built = (patch) => {
  const tree = builtCopy(patch);
  trees.push(tree);
  return tree;
};
const whole = built(undefined);
const without = Object.fromEntries(PARTS.map(({ patch }) => [patch, built(patch)]));
for (const file of readdirSync(PATCHES))
  if (!ALL_PARTS.some(({ patch }) => `${patch}.patch` === file)) throw new Error(`bench/ablations/${file} is not in PARTS`);

/** Runs by part, side ('with' or 'without') and row; peaks by part and side; the floors' reads by target. */
const measured = PARTS.map(() => ({ with: {}, without: {}, peaks: { with: [], without: [] } }));
const floorRuns = {};
/** Each floor target's peak RSS, the largest of its rounds. */
const floorPeaks = {};
for (let round = 1; round <= ROUNDS; round++) {
  for (const [i, { part, patch, rows }] of PARTS.entries()) {
    const sides = [
      ['with', whole],
      ['without', without[patch]],
    ];
    for (const [side, tree] of round % 2 ? sides : sides.reverse()) {
      const { runs, peakRssMiB: peak } = await measureRows(tree, rows);
      measured[i].peaks[side].push(peak);
      for (const [row, run] of Object.entries(runs)) {
        (measured[i][side][row] ??= []).push(run);
        console.log(
          `round ${round}: ${part.padEnd(26)} ${side.padEnd(7)} ${row.padEnd(42)} ${run.rps.toFixed(0).padStart(7)} req/s  p99 ${run.p99.toFixed(2)} ms  peak ${peak.toFixed(1)} MiB`,
        );
      }
    }
  }
  // The floors, each target's reads in turn, starting at another target each round. The targets start anew
  // each round, as each part's services do: one left idle through a round's minutes of other rows answers its
  // first reads slower (docs/benchmarks.md, "What each bespoke part gives").
  const floors = await floorTargets(whole);
  try {
    const { targets } = floors;
    for (const { target, server, scenarios } of targets.map((_, j) => targets[(j + round) % targets.length])) {
      // Every read before any is measured, the same time in all for each target: the service has more code than
      // a hello for the JIT to compile to its fastest, and without this its first read measured paid for all.
      const warmUp = Math.max(1, Math.round(FLOOR_WARM_UP_SECONDS / scenarios.length));
      for (const [, path] of scenarios) wrk(`${server.url}${path}`, { seconds: warmUp });
      for (const [scenario, path] of scenarios) {
        wrk(`${server.url}${path}`, { seconds: 1 });
        const run = wrk(`${server.url}${path}`, { seconds: SECONDS });
        ((floorRuns[target] ??= {})[scenario] ??= []).push(run.rps);
        console.log(`round ${round}: floors ${target.padEnd(14)} ${scenario.padEnd(28)} ${run.rps.toFixed(0).padStart(7)} req/s`);
      }
      floorPeaks[target] = Math.max(floorPeaks[target] ?? 0, peakRssMiB(server.pid));
    }
  } finally {
    await floors.stop();
  }
}

/** What a part gives on a row, as a fraction: more requests a second, a lower p99, a lower peak. */
const gains = (withRuns, withoutRuns, withPeak, withoutPeak) => {
  const rps = median(withRuns.map((r) => r.rps)) / median(withoutRuns.map((r) => r.rps)) - 1;
  const p99 = median(withoutRuns.map((r) => r.p99)) / median(withRuns.map((r) => r.p99)) - 1;
  return { rps, p99, rss: withoutPeak / withPeak - 1 };
};
const percent = (fraction) => (Number.isFinite(fraction) ? `${fraction >= 0 ? '+' : '−'}${Math.abs(fraction * 100).toFixed(0)} %` : 'no reply without it');
const f = (n, digits = 0) => n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** A side's medians, and its failed requests in all rounds (answers not 2xx or 3xx, socket errors and timeouts). */
const sideOf = (runs) => ({
  rps: median(runs.map((r) => r.rps)),
  p99: median(runs.map((r) => r.p99)),
  failed: runs.reduce((sum, r) => sum + r.non2xx + r.socketErrors, 0),
});
const cell = ({ rps, p99, failed }) => `${f(rps)}, ${f(p99, 2)}${failed ? ` (${f(failed)} failed)` : ''}`;
const report = PARTS.map(({ part, patch, rows, judged }, i) => {
  const { peaks } = measured[i];
  const [withPeak, withoutPeak] = [median(peaks.with), median(peaks.without)];
  const rowReports = rows.map((row) => {
    const [withRuns, withoutRuns] = [measured[i].with[row], measured[i].without[row]];
    return {
      row,
      with: sideOf(withRuns),
      without: sideOf(withoutRuns),
      gains: gains(withRuns, withoutRuns, withPeak, withoutPeak),
    };
  });
  const best = Math.max(...rowReports.flatMap((r) => judged.map((measure) => r.gains[measure])));
  return { part, patch, judged, peaks: { with: withPeak, without: withoutPeak }, rows: rowReports, best, keeps: best >= KEEP_GAIN };
});
const floorRatio = (target, scenario, peer, peerScenario) => median(floorRuns[target][scenario]) / median(floorRuns[peer][peerScenario]);
const floorReport = [
  {
    read: 'GET one user (shape B)',
    against: 'Koa ceiling',
    ratio: floorRatio('this service', 'GET one user (shape B)', 'Koa ceiling', 'GET one user (shape B)'),
    floor: FLOORS.koa,
  },
  ...Object.keys(READS).map((read) => ({
    read,
    against: 'json-server',
    ratio: floorRatio('this service', read, 'json-server', read),
    floor: FLOORS.jsonServer,
  })),
];
// Parts measured on the small store only: their services' peaks are at 12 users.
const peakAt12 = Math.max(
  floorPeaks['this service'],
  ...report.flatMap(({ peaks }, i) => (PARTS[i].rows.every((row) => ROWS[row].store === 'small') ? [peaks.with] : [])),
);

const judgedNames = { rps: 'req/s', p99: 'p99', rss: 'peak RSS' };
const table = [
  '| part taken out | row | with: req/s, p99 ms | without: req/s, p99 ms | gain | peak RSS MiB with → without |',
  '|---|---|---:|---:|---:|---:|',
  ...report.flatMap(({ part, judged, peaks, rows }) =>
    rows.map(
      (r, j) =>
        `| ${j === 0 ? part : ''} | ${r.row} | ${cell(r.with)} | ${cell(r.without)} | ${judged.map((m) => `${judgedNames[m]} ${percent(r.gains[m])}`).join(', ')} | ${j === 0 ? `${f(peaks.with, 1)} → ${f(peaks.without, 1)}` : ''} |`,
    ),
  ),
].join('\n');
const verdicts = report
  .map(({ part, best, keeps }) => `- ${part}: ${keeps ? 'earns its keep' : 'does not earn its keep'} (best gain ${percent(best)} on a row it exists for).`)
  .join('\n');
const floorTable = [
  '| read | against | ratio | floor | holds |',
  '|---|---|---:|---:|---|',
  ...floorReport.map(({ read, against, ratio, floor }) => `| ${read} | ${against} | ${ratio.toFixed(2)}× | ${floor}× | ${ratio >= floor ? 'yes' : 'NO'} |`),
].join('\n');
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
const summary = [
  `Run ${new Date().toISOString()}: ${machine}; SQLite; ${ROUNDS} rounds, each side of each part in turn (the order alternating), ${SECONDS} s a row after 1 s of warm-up, wrk -t1 -c50 unless the row says; medians of the rounds. A part earns its keep with a gain of at least ${KEEP_GAIN * 100} % on a row it exists for, in what judges it (the gain column).`,
  '',
  table,
  '',
  verdicts,
  '',
  `Floors in the same run (medians of the rounds' req/s; this service whole, at 12 users): `,
  '',
  floorTable,
  '',
  `Peak RSS at 12 users in this run: this service ${f(peakAt12, 1)} MiB (the largest of its peaks on the stores of 12 users, with every part), Koa's hello ${f(floorPeaks['Koa ceiling'], 1)} MiB, json-server ${f(floorPeaks['json-server'], 1)} MiB (after the floors' rounds).`,
].join('\n');
// A run of chosen parts (ABLATION_PARTS) is written beside the whole run's results, which it leaves as they are.
const name = chosen ? `ablation-${PARTS.map(({ patch }) => patch).join('+')}` : 'ablation';
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, `bench/results/${name}.md`), `${summary}\n`);
writeFileSync(
  join(root, `bench/results/${name}.json`),
  `${JSON.stringify({ machine, rounds: ROUNDS, seconds: SECONDS, parts: report, raw: measured, floors: floorReport, floorRuns, floorPeaks, peakAt12 }, null, 2)}\n`,
);
if (!chosen)
  writeBetweenMarkers(
    join(root, 'docs/benchmarks.md'),
    '<!-- ablation table of make bench: start (bench/ablation.mjs writes what is between these lines) -->',
    '<!-- ablation table of make bench: end -->',
    summary,
  );
console.log(`\n${summary}\n\nWrote bench/results/${name}.md and ${name}.json${chosen ? '' : ', and the ablation table of docs/benchmarks.md'}`);
