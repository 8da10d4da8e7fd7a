// Benchmark, not a test: the time and the server's peak memory to list 200,000 users, on each database.
// Shape B streams the whole list; shape A pages through it (the last page is the deepest offset).
// Run with `make bench`; writes bench/results/large-list.{md,json}.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

const USERS = Number(process.env.BENCH_USERS ?? 200_000);
const root = fileURLToPath(new URL('..', import.meta.url));
const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Peak resident set of a process so far (VmHWM), in MiB. */
const peakRssMiB = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

function startServer(databaseUrl) {
  const child = spawn(process.execPath, [join(root, 'dist/server/main.js')], {
    env: { PATH: process.env.PATH, PORT: '0', DATABASE_URL: databaseUrl, SEED_DEMO_DATA: 'false', LOG_LEVEL: 'info', BASIC_AUTH_USERNAME: 'bench', BASIC_AUTH_PASSWORD: 'bench' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const url = /"url":"([^"]+)"/.exec(out)?.[1];
      if (url) resolve({ url, pid: child.pid, stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGTERM'); }) });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

function rows(from, to) {
  const now = new Date().toISOString();
  return Array.from({ length: to - from }, (_, i) => [`First${from + i}`, `Last${from + i}`, `user${from + i}@example.com`, now, now]);
}

async function fillSqlite(file) {
  const db = new SqliteDatabase(file);
  const insert = db.prepare('INSERT INTO users (first_name, last_name, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => { for (const row of rows(0, USERS)) insert.run(...row); })();
  db.close();
}

async function fillPostgres(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (let from = 0; from < USERS; from += 5000) {
    const batch = rows(from, Math.min(USERS, from + 5000));
    const values = batch.map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`).join(',');
    await client.query(`INSERT INTO users (first_name, last_name, email, created_at, updated_at) VALUES ${values}`, batch.flat());
  }
  await client.end();
}

async function timed(url) {
  const started = performance.now();
  const response = await fetch(url);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  return { ms: performance.now() - started, bytes, status: response.status };
}

async function measure(name, databaseUrl, fill) {
  const server = await startServer(databaseUrl);
  try {
    await fill();
    const baseline = peakRssMiB(server.pid);
    const full = await timed(`${server.url}/users`);
    const fullAgain = await timed(`${server.url}/users`);
    const firstPage = await timed(`${server.url}/api/users?page=1&per_page=100`);
    const lastPage = await timed(`${server.url}/api/users?page=${USERS / 100}&per_page=100`);
    return {
      database: name, users: USERS, fullListMs: Math.min(full.ms, fullAgain.ms), fullListMiB: full.bytes / 2 ** 20,
      firstPageMs: firstPage.ms, lastPageMs: lastPage.ms, rssBeforeMiB: baseline, peakRssMiB: peakRssMiB(server.pid),
      statuses: [full.status, firstPage.status, lastPage.status],
    };
  } finally {
    await server.stop();
  }
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try { await client.connect(); return true; } catch { return false; } finally { await client.end().catch(() => {}); }
}

const results = [];
const dir = mkdtempSync(join(tmpdir(), 'bench-list-'));
try {
  const file = join(dir, 'users.sqlite');
  results.push(await measure('SQLite', `sqlite:${file}`, () => fillSqlite(file)));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (await postgresReachable()) {
  const schema = `bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    const url = new URL(postgresUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    results.push(await measure('PostgreSQL', url.toString(), () => fillPostgres(url.toString())));
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
} else {
  console.warn(`PostgreSQL is not reachable at ${postgresUrl}: measured SQLite only`);
}

const f = (n) => n.toFixed(1);
const table = [
  `Listing ${USERS.toLocaleString('en')} users (${new Date().toISOString()}, Node ${process.version}, ${process.platform})`,
  '',
  '| database | GET /users (full list, streamed) | body | GET /api/users page 1 | last page | server RSS before | server peak RSS |',
  '|---|---|---|---|---|---|---|',
  ...results.map((r) => `| ${r.database} | ${f(r.fullListMs)} ms | ${f(r.fullListMiB)} MiB | ${f(r.firstPageMs)} ms | ${f(r.lastPageMs)} ms | ${f(r.rssBeforeMiB)} MiB | ${f(r.peakRssMiB)} MiB |`),
  '',
].join('\n');
writeFileSync(join(root, 'bench/results/large-list.md'), table);
writeFileSync(join(root, 'bench/results/large-list.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(table);
