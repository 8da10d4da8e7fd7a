// Runs once before Jest's workers start: finds out whether PostgreSQL and Redis are reachable, so the suites
// know whether to run the tests that need them. Where one is missing, one line says so and those tests are
// skipped; under CI=true a missing one fails the run instead.
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Whether a Redis server answers PING at the URL, within 3 s. */
function redisAnswers(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const fail = (error) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(3000, () => fail(new Error('no answer within 3 s')));
    socket.on('error', fail);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      if (data.toString().startsWith('+PONG')) resolve();
      else reject(new Error(`it answered ${JSON.stringify(data.toString().trim())} to PING`));
    });
  });
}

/** Finds Redis for the tests of shared limits (TEST_REDIS_URL), as PostgreSQL is found below. */
async function findRedis() {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  try {
    await redisAnswers(url);
    process.env.TEST_REDIS_URL = url;
    process.env.TEST_REDIS = 'available';
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${url}, and under CI=true its tests must run: ${error.message}`);
    process.env.TEST_REDIS = 'unavailable';
    console.warn(
      `\nRedis is not reachable at ${url} (${error.message}): the tests of limits shared through Redis are skipped. Set TEST_REDIS_URL to use another.\n`,
    );
  }
}

export default async function globalSetup() {
  // The servers and tools the tests start read no settings file: a developer's .env must not change what is
  // tested (a test of the file gives ENV_FILE itself).
  process.env.ENV_FILE = '';
  await findRedis();
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
    // Some tests make databases and roles of their own (a database that refuses connections, a role that
    // cannot install pg_trgm, one that makes the store read-only): they need a superuser.
    const { rows } = await client.query('select rolsuper from pg_roles where rolname = current_user');
    if (rows[0]?.rolsuper) {
      process.env.TEST_POSTGRES_SUPERUSER = 'available';
    } else if (process.env.CI === 'true') {
      throw new Error(`the PostgreSQL user of ${url} is not a superuser, and under CI=true the tests that create databases and roles must run`);
    } else {
      process.env.TEST_POSTGRES_SUPERUSER = 'unavailable';
      console.warn(`\nThe PostgreSQL user of ${url} is not a superuser: the tests that create databases and roles are skipped.\n`);
    }
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
