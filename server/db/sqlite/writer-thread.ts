import { AsyncLocalStorage } from 'node:async_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../database.js';
import { failureOf, perTurn, type WriteAnswer, type WriteRequest, type WriterSettings } from './store-writer.js';
import { createUserRepository } from '../sql-user-repository.js';

// The SQLite store's writer thread: its one writer, for every worker of the cluster primary that starts it, or
// for the single server process that does (store-writer.ts).

type Operation = (...args: unknown[]) => Promise<unknown>;

const port = parentPort!;
const { database: config, timeouts } = workerData as WriterSettings;
// Started once the process (or the cluster primary) has migrated the store: it checks the schema, never changes it.
const database = await openDatabase(config, { timeouts, migrations: 'check', writesOnly: true });
// The deadline of the write whose repository operation is running: its units of writes are begun by it, or
// never (group-commit.ts checks it as each would begin), however long they wait behind other commits.
const deadlines = new AsyncLocalStorage<number>();
const repository = createUserRepository({ ...database, write: (work, options) => database.write(work, { ...options, beginBy: deadlines.getStore() }) });

// The answers of one group commit settle in the same turn, and go back in one message.
const answer = perTurn<WriteAnswer>((answers) => port.postMessage(JSON.stringify(answers)));

// JSON text of a batch of writes (store-writer.ts), or 'close'.
port.on('message', (message: string) => {
  if (message === 'close') {
    void database.close().finally(() => port.close());
    return;
  }
  for (const { id, operation, args, beginBy } of JSON.parse(message) as WriteRequest[]) {
    deadlines
      .run(beginBy, () => (repository[operation] as Operation).apply(repository, args))
      .then(
        (value) => answer({ id, value }),
        (error: unknown) => answer({ id, failure: failureOf(error) }),
      );
  }
});
