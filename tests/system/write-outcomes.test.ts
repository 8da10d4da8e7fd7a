import { serverOnNewSqliteStore } from '../support/server-process.js';
import { slowSyncs, stopAtNextSync, straceAvailable } from '../support/slow-disk.js';
import type { TestStore } from '../support/test-store.js';
import { audit, createOnce, flood, storedEmails, summary, type CreateAnswer, type WriteAudit } from '../support/write-audit.js';

// A write answered with anything but success is never made, and one answered 201 is on disk: a client that
// retries after a 503 makes no duplicate. The one exception is 504 write-outcome-unknown, a write that had
// begun when its request's time ran out, whose outcome the client learns with its Idempotency-Key. Each test
// floods the service with creates while a real fault holds its store (a disk whose syncs strace delays, a
// process stopped by SIGSTOP, a PostgreSQL lock held by another session, answers lost on the way back), then
// reads the store itself.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const describeStrace = straceAvailable() ? describe : describe.skip;

/**
 * Once the fault is over and every create was answered: a statement timeout (after which the writer begins
 * nothing that was asked during the fault) and a second more, then a create that must succeed.
 */
async function settled(url: string, statementMs: number): Promise<void> {
  await sleep(statementMs + 1000);
  expect((await createOnce(url)).status).toBe(201);
}

/** The flood's outcomes against the store: none refused and stored, none acknowledged and lost, none unanswered. */
async function expectHonest(name: string, answers: readonly CreateAnswer[], store: TestStore): Promise<WriteAudit> {
  const result = audit(answers, await storedEmails(store));
  console.log(summary(name, result));
  expect(result.refusedButStored).toEqual([]);
  expect(result.acknowledgedButLost).toEqual([]);
  expect(result.unanswered).toEqual([]);
  return result;
}

describeStrace('SQLite: a write that waited behind slow syncs', () => {
  const each = serverOnNewSqliteStore();
  const STATEMENT_MS = 2000;
  // Shorter than the statement timeout: the flood reaches the writer in time, and waits there for a commit.
  const SYNC_DELAY_MS = 1500;

  test.each([['1'], ['2']])(
    'WORKERS=%s: every sync 1.5 s late, one create and then 600 at once: each 201 is stored, no refused create is',
    async (workers) => {
      const server = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS), LOG_LEVEL: 'info' });
      expect((await createOnce(server.url)).status).toBe(201);
      const disk = await slowSyncs(server.pid, SYNC_DELAY_MS);
      let answers: CreateAnswer[];
      try {
        const first = createOnce(server.url);
        await sleep(500);
        answers = [await first, ...(await flood(server.url, 600))];
      } finally {
        await disk.lift();
      }
      await settled(server.url, STATEMENT_MS);
      const result = await expectHonest(`WORKERS=${workers}, syncs ${SYNC_DELAY_MS} ms late`, answers, each.store);
      // The fault was felt: a commit carries at most 256 creates, and the next waits for a late sync.
      expect(result.refused + result.unknown).toBeGreaterThan(0);
      expect(result.made).toBeGreaterThan(0);
    },
    90_000,
  );
});

describeStrace('SQLite: a writer stopped in the middle of a commit', () => {
  const each = serverOnNewSqliteStore();
  const STATEMENT_MS = 1000;

  test.each([['1'], ['2']])(
    'WORKERS=%s: the process that writes stopped (SIGSTOP) in a commit for 3 s during a flood of 600 creates: each 201 is stored, no refused create is',
    async (workers) => {
      const server = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS), LOG_LEVEL: 'info' });
      expect((await createOnce(server.url)).status).toBe(201);
      // With WORKERS the primary writes for every worker (its writer thread); alone, the process writes itself.
      const stopping = stopAtNextSync(server.pid, 10_000);
      const answers = flood(server.url, 600);
      const stopped = await stopping;
      await sleep(3000);
      stopped.resume();
      const answered = await answers;
      await settled(server.url, STATEMENT_MS);
      const result = await expectHonest(`WORKERS=${workers}, stopped 3 s in a commit`, answered, each.store);
      expect(result.refused + result.unknown).toBeGreaterThan(0);
    },
    90_000,
  );
});
