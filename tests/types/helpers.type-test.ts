import { changeUser, createSandboxClient, createUserRecordsClient, pages, preferFor, readPage } from '../../client/src/index.js';

// Compiled by `tsc --noEmit` (make test), never run: the helpers' types are the contract's, not text or any;
// each @ts-expect-error must meet a real type error.

export async function listTypes(): Promise<void> {
  const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });

  // Each page carries the list's count, typed from the contract's X-Total-Count and X-Total-Count-Relation.
  for await (const page of pages(client, '/users', { limit: 5 })) {
    const total: number = page.total;
    const relation: 'eq' | 'gte' = page.totalRelation;
    // @ts-expect-error X-Total-Count is a number, not text
    const text: string = page.total;
    // @ts-expect-error the relation is eq or gte, nothing else
    const unknown: 'exact' = page.totalRelation;
    void [total, relation, text, unknown];
  }
}

export async function pageTypes(): Promise<void> {
  const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });

  // Shape A's page links first, prev, next and last; each is a query that readPage takes again.
  const demo = await readPage(client, '/api/users', { per_page: 10, sort: 'last_name' });
  const nextNumber: number | undefined = demo.next?.page;
  const cursor: string | undefined = demo.prev?.cursor;
  if (demo.last) await readPage(client, '/api/users', demo.last);
  const first: string | undefined = demo.items[0]?.first_name;
  void [nextNumber, cursor, first];
  // @ts-expect-error a page number is a number
  const numberText: string | undefined = demo.next?.page;
  void numberText;

  // Shape B's list links next alone, with a cursor and no page number.
  const local = await readPage(client, '/users', { limit: 10 });
  if (local.next) await readPage(client, '/users', local.next);
  // @ts-expect-error shape B's Link has no prev
  void local.prev;
  // @ts-expect-error shape B's pages have no number
  void local.next?.page;
  // @ts-expect-error shape B's list takes no per_page
  await readPage(client, '/users', { per_page: 10 });
}

export function preferTypes(): void {
  const sandbox = createSandboxClient({ baseUrl: 'http://127.0.0.1:4011' });

  // Prefer goes to operations of the sandbox, each asking for a status it declares.
  sandbox.use(preferFor({ 'POST /users': 'code=429', 'GET /users/{id}': 'code=404', 'PATCH /api/users/{id}': 'code=422, example=invalidEmail' }));
  preferFor({ 'GET /users': 'example=search', 'POST /__sandbox/reset': 'code=503' });
  // @ts-expect-error GET /users declares no 429
  preferFor({ 'GET /users': 'code=429' });
  // @ts-expect-error DELETE /users/{id} declares no 201
  preferFor({ 'DELETE /users/{id}': 'code=201' });
  // @ts-expect-error /users/{id} has no POST
  preferFor({ 'POST /users/{id}': 'code=404' });
  // @ts-expect-error the method in capitals, as the request sends it
  preferFor({ 'post /users': 'code=429' });
  // @ts-expect-error a preference is code= or example=, as the sandbox reads it
  preferFor({ 'POST /users': '429' });
}

export async function changeTypes(): Promise<void> {
  const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });

  // A conflict is told apart from the change before the changed user can be read.
  const result = await changeUser(client, '/users/{id}', 2, () => ({ lastName: 'Wren' }));
  // @ts-expect-error the result may be a conflict, which has no user of its own
  void result.user;
  if (result.conflict) {
    const theirs: string = result.current.user.lastName;
    const etag: string = result.current.etag;
    const status: number = result.problem.status;
    void [theirs, etag, status];
    await changeUser(client, '/users/{id}', 2, () => ({ lastName: 'Wren' }), { known: result.current });
  } else {
    const mine: string = result.user.lastName;
    void mine;
  }
  const demo = await changeUser(client, '/api/users/{id}', 2, () => ({ name: 'Tobias Wren' }));
  if (demo.conflict) {
    const first: string = demo.current.user.first_name;
    // @ts-expect-error shape A's user has first_name
    void demo.current.user.firstName;
    void first;
  }

  // Retrying is asked for in so many words; attempts counts its tries.
  await changeUser(client, '/users/{id}', 2, (user) => ({ lastName: `${user.lastName}!` }), { retry: true, attempts: 5 });
  // @ts-expect-error attempts without retry: true would not retry
  await changeUser(client, '/users/{id}', 2, () => ({ lastName: 'Wren' }), { attempts: 5 });
}
