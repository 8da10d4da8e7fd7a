import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { postgresOutage, sqliteOutage } from '../../server/db/outage.js';
import { postgresSuperuserAvailable } from '../support/test-store.js';

// The outage table (server/db/outage.ts) against errors that real stores raise: each one provoked for real
// where that is cheap, and taken from pg's own DatabaseError class where a real fault is out of reach here.

async function caught(work: () => Promise<unknown> | unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

// Makes a database and a role of its own, which needs a superuser.
const describePostgres = postgresSuperuserAvailable ? describe : describe.skip;

describePostgres('PostgreSQL errors', () => {
  const url = process.env.TEST_POSTGRES_URL!;
  const suffix = randomBytes(4).toString('hex');
  const admin = new pg.Client({ connectionString: url });
  const withClient = async (config: pg.ClientConfig, work: (client: pg.Client) => Promise<unknown>) => {
    const client = new pg.Client(config);
    client.on('error', () => {});
    await client.connect();
    try {
      return await caught(() => work(client));
    } finally {
      await client.end().catch(() => {});
    }
  };

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database noconn_${suffix} with allow_connections false`);
    await admin.query(`create role limited_${suffix} login connection limit 0`);
  });
  afterAll(async () => {
    await admin.query(`drop database if exists noconn_${suffix}`);
    await admin.query(`drop role if exists limited_${suffix}`);
    await admin.end();
  });

  test.each([
    ['57014 statement timeout', () => withClient({ connectionString: url, statement_timeout: 50 }, (c) => c.query('select pg_sleep(2)')), '57014'],
    [
      '25006 read-only transaction',
      () => withClient({ connectionString: url }, (c) => c.query('set transaction_read_only = on; create temp table t (x int)')),
      '25006',
    ],
    ['57P01 terminated backend', () => withClient({ connectionString: url }, (c) => c.query('select pg_terminate_backend(pg_backend_pid())')), '57P01'],
    ['client-side query timeout', () => withClient({ connectionString: url, query_timeout: 50 }, (c) => c.query('select pg_sleep(2)')), 'QUERY_TIMEOUT'],
  ])('%s is an outage', async (_name, provoke, code) => {
    expect(postgresOutage(await provoke())).toBe(code);
  });

  test('55000 database not accepting connections, 53300 too many connections, ECONNREFUSED', async () => {
    const target = new URL(url);
    target.pathname = `/noconn_${suffix}`;
    expect(postgresOutage(await caught(() => new pg.Client({ connectionString: target.toString() }).connect()))).toBe('55000');
    const limited = new URL(url);
    limited.username = `limited_${suffix}`;
    expect(postgresOutage(await caught(() => new pg.Client({ connectionString: limited.toString() }).connect()))).toBe('53300');
    expect(postgresOutage(await caught(() => new pg.Client({ host: '127.0.0.1', port: 1 }).connect()))).toBe('ECONNREFUSED');
  });

  test('a server that accepts but never answers (a blackhole) times the connection out', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const pool = new pg.Pool({ host: '127.0.0.1', port: (silent.address() as AddressInfo).port, connectionTimeoutMillis: 100 });
    try {
      expect(postgresOutage(await caught(() => pool.connect()))).toBe('CONNECT_TIMEOUT');
    } finally {
      await pool.end();
      silent.close();
    }
  });

  test('a pool with no free connection in time', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 50 });
    const held = await pool.connect();
    try {
      expect(postgresOutage(await caught(() => pool.connect()))).toBe('CONNECT_TIMEOUT');
    } finally {
      held.release();
      await pool.end();
    }
  });

  test.each([
    ['23505 unique violation', 'create temp table u (x int primary key); insert into u values (1), (1)'],
    ['42P01 undefined table', 'select * from no_such_table'],
    ['22P02 invalid input', "select 'x'::int"],
  ])('%s is a bug, not an outage', async (_name, text) => {
    expect(postgresOutage(await withClient({ connectionString: url }, (c) => c.query(text)))).toBeUndefined();
  });

  test.each(['57P03', '57P02', '53100', '53200', '08006', '08P01', '58030'])('%s (from the server, out of reach here) is an outage', (code) => {
    const error = Object.assign(new pg.DatabaseError('raised by the server', 0, 'error'), { code });
    expect(postgresOutage(error)).toBe(code);
  });
});

describe('SQLite errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'user-records-outage-'));
  const file = join(dir, 'x.sqlite');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('SQLITE_BUSY, SQLITE_READONLY and a closed database are outages', async () => {
    const holder = new SqliteDatabase(file);
    holder.exec('create table t (x int); begin immediate');
    const waiter = new SqliteDatabase(file, { timeout: 0 });
    expect(sqliteOutage(await caught(() => waiter.exec('begin immediate')))).toBe('SQLITE_BUSY');
    holder.exec('rollback');
    const reader = new SqliteDatabase(file, { readonly: true });
    expect(sqliteOutage(await caught(() => reader.exec('insert into t values (1)')))).toMatch(/^SQLITE_READONLY/);
    waiter.close();
    expect(sqliteOutage(await caught(() => waiter.exec('select 1')))).toBe('STORE_CLOSED');
    for (const database of [holder, reader]) database.close();
  });

  test('a constraint or a syntax error is a bug', async () => {
    const database = new SqliteDatabase(':memory:');
    database.exec('create table u (x int primary key); insert into u values (1)');
    expect(sqliteOutage(await caught(() => database.exec('insert into u values (1)')))).toBeUndefined();
    expect(sqliteOutage(await caught(() => database.exec('selec 1')))).toBeUndefined();
    database.close();
  });
});
