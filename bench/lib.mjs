// Shared by the benchmarks: start targets as processes, fill stores, drive them with wrk, read peak memory.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, rmSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const CREDENTIALS = { username: 'bench', password: 'bench-password' };
/** The Authorization header of those credentials, for the protected resource. */
export const BASIC_AUTHORIZATION = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64')}`;
/** wrk scripts and the output of the targets, for this run only. */
const scratch = mkdtempSync(join(tmpdir(), 'bench-run-'));
process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));

/** Processes a process started (cluster workers), read from /proc. */
const childrenOf = (pid) =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));

/** Peak resident set so far (VmHWM) of a process and every process under it, in MiB. */
export const peakRssMiB = (pid) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 + childrenOf(pid).reduce((sum, child) => sum + peakRssMiB(child), 0);

export function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts a process on a free port (passed as PORT and to `argsFor`); resolves once it answers HTTP, and
 * (`listening`) once that many of its workers have logged that they listen. Its output goes to a file, not
 * a pipe: wrk runs synchronously here, and a pipe nobody drains would fill and block the target's logging
 * mid-measurement.
 */
export async function startProcess(command, argsFor, env = {}, listening = 0, cwd = root) {
  const port = await freePort();
  const args = argsFor(port);
  const logFile = join(scratch, `output-${port}.log`);
  const log = openSync(logFile, 'w');
  const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: ['ignore', log, log] });
  closeSync(log);
  const output = () => readFileSync(logFile, 'utf8');
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited: ${output()}`);
    const listeners = output().split('"msg":"user records service listening"').length - 1;
    if (
      listeners >= listening &&
      (await fetch(url).then(
        () => true,
        () => false,
      ))
    )
      break;
    if (tries > 300) {
      // Not left running: a target that never answered would hold its port and a core through every later run.
      child.kill('SIGKILL');
      throw new Error(`${command} did not start: ${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }).then(() => rmSync(logFile, { force: true })),
  };
}

/**
 * Node's options and environment in `npm start` (and the image's CMD and ENV) of the tree at `tree`: the
 * benchmarks run the service as operators do. The script sets variables as `NAME=${NAME:-default}`: the
 * default, unless this run sets them.
 */
function startScriptOf(tree) {
  const start = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')).scripts.start;
  const match = /^((?:[A-Z_]+=\$\{[A-Z_]+:-[^}\s]*\} )*)exec node ((?:--\S+ )*)dist\/server\/main\.js$/.exec(start);
  if (!match) throw new Error(`package.json's start script is not \`[NAME=\${NAME:-value} ...] exec node [--options] dist/server/main.js\`: ${start}`);
  const env = Object.fromEntries(
    match[1]
      .split(' ')
      .filter(Boolean)
      .map((assignment) => {
        const [, name, value] = /^([A-Z_]+)=\$\{[A-Z_]+:-([^}]*)\}$/.exec(assignment);
        return [name, process.env[name] ?? value];
      }),
  );
  return { options: match[2].split(' ').filter(Boolean), env };
}

/**
 * This service, built, on the given DATABASE_URL, configured as in production: started with `npm start`'s
 * options, it logs every request at the default level (info), here to a file. `tree` is the built copy of the
 * project to run (ablation.mjs runs copies with a part taken out), this one by default; `under`, a command
 * (and its arguments) that runs node, such as strace.
 */
export async function startService(databaseUrl, nodeOptions = [], env = {}, { tree = root, under = [] } = {}) {
  const start = startScriptOf(tree);
  const node = [...start.options, ...nodeOptions, join(tree, 'dist/server/main.js')];
  const server = await startProcess(
    under[0] ?? process.execPath,
    () => (under.length ? [...under.slice(1), process.execPath, ...node] : node),
    {
      ...start.env,
      DATABASE_URL: databaseUrl,
      BASIC_AUTH_USERNAME: CREDENTIALS.username,
      BASIC_AUTH_PASSWORD: CREDENTIALS.password,
      AUTH_MAX_FAILURES: '1000000',
      // The benchmark drives tens of thousands of writes a second from one address.
      RATE_LIMIT_WRITES_PER_MINUTE: '0',
      // And all of a row's searches, 50 at once: one client's share of the searches waiting (16) would refuse
      // most of them, and the row would measure refusals instead of searches.
      SEARCH_QUEUE_PER_CLIENT: '0',
      ...env,
    },
    Number(env.WORKERS ?? 1),
    tree,
  );
  if (under.length === 0) return server;
  // strace ends when the process it runs does, and does not pass SIGTERM on: the service is stopped itself.
  return {
    ...server,
    stop: () => {
      for (const child of childrenOf(server.pid)) process.kill(child, 'SIGTERM');
      return server.stop();
    },
  };
}

// Names with mixed case and a spread of values, so that searches and sorts meet what real stores hold; the
// folded copies (`*_key`) are what the service writes beside each field (server/domain/user-query.ts).
const NAMES = ['Mira', 'Tobias', 'Priya', 'Ezra', 'Noor', 'Felix', 'Ines', 'Rafael', 'Hana', 'Oskar', 'Lucia', 'Dmitri'];
export const userRow = (i, now) => {
  const [first, last, email] = [`${NAMES[i % NAMES.length]}${i % 997}`, `Last${(i * 7919) % 100003}`, `user${i}@example.com`];
  return [first, first.toLowerCase(), last, last.toLowerCase(), email, email.toLowerCase(), now, now];
};
const COLUMNS = 'first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at';

/** Adds `count` users straight into the store (the server has created the tables). */
export async function fillStore(databaseUrl, count) {
  const now = new Date().toISOString();
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SqliteDatabase(databaseUrl.slice('sqlite:'.length));
    const insert = db.prepare(`INSERT INTO users (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(...userRow(i, now));
    })();
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  for (let from = 0; from < count; from += 5000) {
    const rows = Array.from({ length: Math.min(5000, count - from) }, (_, i) => userRow(from + i, now));
    const values = rows.map((row, i) => `(${row.map((_, j) => `$${i * row.length + j + 1}`).join(', ')})`).join(',');
    await client.query(`INSERT INTO users (${COLUMNS}) VALUES ${values}`, rows.flat());
  }
  await client.end();
}

export async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A store of its own: a temporary SQLite file, or a PostgreSQL schema; `drop` removes it. */
export async function createStore(kind) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-'));
    return { url: `sqlite:${join(dir, 'users.sqlite')}`, drop: async () => execFileSync('rm', ['-rf', dir]) };
  }
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** Installs wrk from Debian's packages when it is missing and apt-get can run. */
export function ensureWrk() {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
  } catch (error) {
    // `wrk -v` prints its version and exits 1; only a missing binary is a reason to install.
    if (error.code !== 'ENOENT') return;
    execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], { stdio: 'inherit' });
  }
}

let scripts = 0;

/** wrk's arguments for a run (see wrk), its request script written to the scratch folder. */
function wrkArguments(url, { method = 'GET', body, headers = {}, seconds = 5, connections = 50, randomIds } = {}) {
  const script = join(scratch, `request-${++scripts}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(method)}`];
  if (randomIds !== undefined) {
    const { pathname, search } = new URL(url.replace('{id}', 'ID'));
    const [before, after] = `${pathname}${search}`.split('ID');
    if (after === undefined) throw new Error(`randomIds needs a URL with {id} in its path or query: ${url}`);
    lines.push(
      `math.randomseed(${Date.now() % 2 ** 31})`,
      `request = function() return wrk.format(nil, ${JSON.stringify(before)} .. math.random(1, ${randomIds}) .. ${JSON.stringify(after)}) end`,
    );
  }
  if (body !== undefined) lines.push(`wrk.body = ${JSON.stringify(JSON.stringify(body))}`, 'wrk.headers["Content-Type"] = "application/json"');
  for (const [name, value] of Object.entries(headers)) lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  writeFileSync(script, lines.join('\n'));
  // A full list of 100,000 users takes seconds: wrk's default timeout (2 s) would drop those from the latencies.
  return ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '--latency', '-s', script, url.replace('{id}', '1')];
}

/** What a wrk report says: requests a second, the median and 99th percentile latency in ms, and the failures. */
function wrkReport(out) {
  const latency = (label) => {
    const match = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    const factor = { us: 0.001, ms: 1, s: 1000 }[match[2]];
    return Number(match[1]) * factor;
  };
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]),
    p50: latency('50'),
    p99: latency('99'),
    requests: Number(/(\d+) requests in/.exec(out)[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: (/Socket errors: (.*)/.exec(out)?.[1] ?? '').split(',').reduce((sum, part) => sum + Number(/\d+/.exec(part)?.[0] ?? 0), 0),
  };
}

/**
 * Drives a URL with wrk (1 thread, `connections` connections) and parses its report. With `randomIds`, each
 * request asks for the URL's path (and query string) with its `{id}` replaced by an id from 1 to `randomIds`,
 * drawn at random: a read whose answer no cache of one URL holds.
 */
export function wrk(url, options) {
  return wrkReport(execFileSync('wrk', wrkArguments(url, options)).toString());
}

/** wrk as wrk() runs it, in a process of its own while the caller goes on: resolves with its report. */
export function wrkInBackground(url, options) {
  const child = spawn('wrk', wrkArguments(url, options), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(wrkReport(out)) : reject(new Error(`wrk exited with ${code}: ${out}`)))),
  );
}
