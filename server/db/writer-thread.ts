import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './database.js';
import { failureOf, perTurn, type WriteAnswer, type WriteRequest, type WriterSettings } from './store-writer.js';
import { createUserRepository } from './user.repository.js';

// The SQLite store's writer thread: its one writer, for every worker of the cluster primary that starts it, or
// for the single server process that does (store-writer.ts).

type Operation = (...args: unknown[]) => Promise<unknown>;

const port = parentPort!;
const { database: config, timeouts } = workerData as WriterSettings;
// Started once the process (or the cluster primary) has migrated the store: it checks the schema, never changes it.
const database = await openDatabase(config, { timeouts, migrations: 'check', writesOnly: true });
const repository = createUserRepository(database);

// The answers of one group commit settle in the same turn, and go back in one message.
const answer = perTurn<WriteAnswer>((answers) => port.postMessage(JSON.stringify(answers)));

// JSON text of a batch of writes (store-writer.ts), or 'close'.
port.on('message', (message: string) => {
  if (message === 'close') {
    void database.close().finally(() => port.close());
    return;
  }
  const now = Date.now();
  for (const { id, operation, args, beginBy } of JSON.parse(message) as WriteRequest[]) {
    // Its asker has given up: it waited to get here (behind a sync that hung, say) as long as it may wait to begin.
    if (now > beginBy) {
      answer({ id, failure: { kind: 'unavailable', code: 'WRITER_BACKLOG' } });
      continue;
    }
    (repository[operation] as Operation).apply(repository, args).then(
      (value) => answer({ id, value }),
      (error: unknown) => answer({ id, failure: failureOf(error) }),
    );
  }
});
