import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from './builders.js';
import { postgresQuery, type TestStore } from './test-store.js';

// What a client may conclude from each answer to a write, checked against what the store holds afterwards:
// a 201 is on disk, a 503 (or any other refusal) was never made, and only 504 write-outcome-unknown may go
// either way.

/** One create of a flood: the address it carried, and its answer (status 0: none within the hang bound). */
export interface CreateAnswer {
  readonly email: string;
  readonly status: number;
  readonly type?: string;
}

/** The problem type of the one answer that does not say whether the write was made. */
export const OUTCOME_UNKNOWN = 'urn:user-records:problem:write-outcome-unknown';

/** How long a create may go unanswered before the flood counts it as a hang. */
const HANG_MS = 60_000;

/**
 * One create on a connection of its own (`POST {url}/users`), its answer and problem type; `keyed`: with an
 * Idempotency-Key (its address, which no other create carries).
 */
export async function createOnce(url: string, { keyed = false } = {}): Promise<CreateAnswer> {
  const input = buildUserInput();
  try {
    const response = await fetch(`${url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close', ...(keyed ? { 'idempotency-key': input.email } : {}) },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const body = (await response.json()) as { type?: string };
    return { email: input.email, status: response.status, ...(body.type === undefined ? {} : { type: body.type }) };
  } catch {
    return { email: input.email, status: 0 };
  }
}

/** `count` creates sent at once. */
export const flood = (url: string, count: number): Promise<CreateAnswer[]> => Promise.all(Array.from({ length: count }, () => createOnce(url)));

/** Creates sent `perWave` at a time every `everyMs`, until `stop` resolves; resolves with every answer. */
export async function steadyFlood(url: string, perWave: number, everyMs: number, stop: Promise<unknown>): Promise<CreateAnswer[]> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const answers: Array<Promise<CreateAnswer[]>> = [];
  while (!stopped) {
    answers.push(flood(url, perWave));
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return (await Promise.all(answers)).flat();
}

/** Creates kept `concurrency` at a time, each sent when one is answered, until stopped. */
export interface CreateLoops {
  /** Creates answered 201 so far. */
  made(): number;
  /** Sends no more; resolves with every answer once those under way are in. */
  stop(): Promise<CreateAnswer[]>;
}

/** Starts `concurrency` loops of createOnce: a steady number in flight, however slowly they are answered. */
export function keepCreating(url: string, { concurrency, keyed = false }: { concurrency: number; keyed?: boolean }): CreateLoops {
  const answers: CreateAnswer[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) answers.push(await createOnce(url, { keyed }));
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    made: () => answers.filter(({ status }) => status === 201).length,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return answers;
    },
  };
}

/** The addresses of the users a store holds, read from it directly. */
export async function storedEmails(store: TestStore): Promise<Set<string>> {
  if (store.sqliteFile !== undefined) {
    const reader = new SqliteDatabase(store.sqliteFile, { readonly: true });
    try {
      return new Set((reader.prepare('SELECT email FROM users').all() as Array<{ email: string }>).map((row) => row.email));
    } finally {
      reader.close();
    }
  }
  return new Set((await postgresQuery<{ email: string }>('SELECT email FROM users', [], store.url)).map((row) => row.email));
}

/** The answers a flood got, sorted by what they told the client, against what the store holds. */
export interface WriteAudit {
  readonly made: number;
  readonly refused: number;
  readonly unknown: number;
  /** Refused (an answer other than 201 and 504) and yet stored: the defect these tests exist for. */
  readonly refusedButStored: CreateAnswer[];
  /** Answered 201 and not stored. */
  readonly acknowledgedButLost: CreateAnswer[];
  /** Not answered within the hang bound, or answered with a status no create may have. */
  readonly unanswered: CreateAnswer[];
  /** Of the outcomes unknown to their clients, how many were made. */
  readonly unknownMade: number;
}

/** Sorts a flood's answers against the addresses the store holds. */
export function audit(answers: readonly CreateAnswer[], stored: ReadonlySet<string>): WriteAudit {
  const unknown = answers.filter(({ status, type }) => status === 504 && type === OUTCOME_UNKNOWN);
  const refused = answers.filter(({ status }) => status === 503 || status === 409 || status === 429);
  return {
    made: answers.filter(({ status }) => status === 201).length,
    refused: refused.length,
    unknown: unknown.length,
    refusedButStored: refused.filter(({ email }) => stored.has(email)),
    acknowledgedButLost: answers.filter(({ status, email }) => status === 201 && !stored.has(email)),
    unanswered: answers.filter((answer) => answer.status !== 201 && !refused.includes(answer) && !unknown.includes(answer)),
    unknownMade: unknown.filter(({ email }) => stored.has(email)).length,
  };
}

/** A line for the test's output: what the flood got, for the note of a run. */
export const summary = (name: string, { made, refused, unknown, unknownMade, refusedButStored, acknowledgedButLost, unanswered }: WriteAudit): string =>
  `${name}: ${made} made, ${refused} refused (${refusedButStored.length} of them stored), ${unknown} unknown (${unknownMade} of them stored), ${acknowledgedButLost.length} acknowledged but lost, ${unanswered.length} unanswered`;
