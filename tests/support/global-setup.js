// Runs once before Jest's workers start: finds out whether PostgreSQL is reachable, so the suites know
// whether to run their PostgreSQL half. Under CI=true an unreachable PostgreSQL fails the run instead.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export default async function globalSetup() {
  // One log file for every server of the run; global-teardown.js scans it for credentials.
  process.env.TEST_LOG_FILE ??= join(mkdtempSync(join(tmpdir(), 'user-records-logs-')), 'run.log');

  const url = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    // As a database administrator would: pg_trgm in the public schema, once. Left to the service, the first
    // test's migration would install it in that test's schema, and dropping the schema would take the
    // extension (and every other test's substring index) with it.
    await client.query('create extension if not exists pg_trgm schema public').catch((error) => {
      console.warn(`\npg_trgm could not be installed (${error.message}): PostgreSQL's searches run without their index.\n`);
    });
    process.env.TEST_POSTGRES_URL = url;
    process.env.TEST_POSTGRES = 'available';
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL is not reachable at ${url}, and under CI=true its tests must run: ${error.message}`);
    }
    process.env.TEST_POSTGRES = 'unavailable';
    console.warn(`\nPostgreSQL is not reachable at ${url} (${error.message}): its tests are skipped. Set TEST_POSTGRES_URL to use another.\n`);
  } finally {
    await client.end().catch(() => {});
  }
}
