import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { commandRuns, toolReady } from './system-tools.js';
import { postgresQuery, type TestStore } from './test-store.js';

// A real PgBouncer (Debian's, 1.18) in front of the test PostgreSQL, as deployments put one in front of many
// instances: `pool_mode = transaction` unless told otherwise, and few server connections, so that clients
// share them as they do in production.

export interface PgBouncer {
  /** The URL of `database` through the pooler, as the service's DATABASE_URL. */
  url(database: string): string;
  /** Everything PgBouncer logged. */
  output(): string;
  stop(): Promise<void>;
}

/** True when Debian's pgbouncer is installed. */
export const pgbouncerAvailable = (): boolean =>
  toolReady(commandRuns('pgbouncer', ['--version']) ? undefined : 'pgbouncer is missing', 'the tests behind PgBouncer', 'make deploy-tools installs it');

export interface PgBouncerOptions {
  readonly poolMode?: 'session' | 'transaction';
  /** Server connections per database and user. */
  readonly poolSize?: number;
  /** Startup parameters to ignore instead of refusing (as operators add to get an application to start). */
  readonly ignoreStartupParameters?: readonly string[];
}

/** Starts PgBouncer on a free loopback port in front of TEST_POSTGRES_URL's server; resolves once it listens. */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const upstream = new URL(process.env.TEST_POSTGRES_URL!);
  const user = decodeURIComponent(upstream.username) || userInfo().username;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'user-records-pgbouncer-'));
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.poolSize ?? 2}`,
      'max_client_conn = 500',
      // node-postgres sends none of these unless asked; the list is what PgBouncer's own docs suggest.
      `ignore_startup_parameters = ${['extra_float_digits', ...(options.ignoreStartupParameters ?? [])].join(',')}`,
      'server_reset_query = DISCARD ALL',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as root, it runs as postgres and reads its files as that user.
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) }
    : undefined;
  chmodSync(dir, 0o755);
  const child: ChildProcess = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) });
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`PgBouncer did not listen within 10 s:\n${printed}`)), 10_000);
    const check = () => {
      if (printed.includes(`listening on 127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on('data', check);
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PgBouncer exited with ${code}:\n${printed}`));
    });
  });
  return {
    url: (database) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    output: () => printed,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh database of the test PostgreSQL, reached through `bouncer`: PgBouncer 1.18 refuses the `options`
 * parameter that gives the other suites a schema each.
 */
export async function databaseBehind(bouncer: PgBouncer): Promise<TestStore & { readonly database: string }> {
  const database = `user_records_pgb_${randomBytes(5).toString('hex')}`;
  await postgresQuery(`create database ${database}`);
  return {
    dialect: 'postgres',
    url: bouncer.url(database),
    database,
    drop: async () => void (await postgresQuery(`drop database if exists ${database} with (force)`)),
  };
}
