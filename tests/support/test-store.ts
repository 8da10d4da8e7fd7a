import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The databases the service supports, each of which the suites run against. */
export type Dialect = 'sqlite' | 'postgres';
export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** True when globalSetup reached PostgreSQL (always under CI=true, which fails otherwise). */
export const postgresAvailable = process.env.TEST_POSTGRES === 'available';

/** Whether the tests may create databases and roles there (a superuser; see global-setup.js). */
export const postgresSuperuserAvailable = process.env.TEST_POSTGRES_SUPERUSER === 'available';

/** An empty store of its own for one test server (or a row of them, for restart tests). */
export interface TestStore {
  readonly dialect: Dialect;
  /** `DATABASE_URL` pointing at the store. */
  readonly url: string;
  /** Where SQLite keeps its file, for tests that open it directly. */
  readonly sqliteFile?: string;
  drop(): Promise<void>;
}

/** One query on a connection of its own: as the test database's administrator, or as `url` says. */
export async function postgresQuery<R extends pg.QueryResultRow>(sql: string, values: unknown[] = [], url = process.env.TEST_POSTGRES_URL!): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** A temporary SQLite file, or a fresh PostgreSQL schema reached through `search_path`. */
export async function createTestStore(dialect: Dialect): Promise<TestStore> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'user-records-'));
    const sqliteFile = join(dir, 'users.sqlite');
    return { dialect, url: `sqlite:${sqliteFile}`, sqliteFile, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (!postgresAvailable) throw new Error('PostgreSQL is not reachable; see tests/support/global-setup.js');
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await postgresQuery(`CREATE SCHEMA ${schema}`);
  const url = new URL(process.env.TEST_POSTGRES_URL!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { dialect, url: url.toString(), drop: async () => void (await postgresQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)) };
}

/** `describe` for each dialect; PostgreSQL's block is reported as skipped when it cannot be reached. */
export function describeEachDialect(body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) {
    const describeIt = dialect === 'postgres' && !postgresAvailable ? describe.skip : describe;
    describeIt(dialect, () => body(dialect));
  }
}
