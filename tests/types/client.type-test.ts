import {
  changeUser,
  createSandboxClient,
  createUserRecordsClient,
  pages,
  type AnyUserRecordsClient,
  type Problem,
  type ProblemType,
} from '../../client/src/index.js';

// Compiled by `tsc --noEmit` (make test), never run: each @ts-expect-error must meet a real type error,
// so misuse of the client that compiles, or a directive that no longer fires, fails the type check.

export async function typeTests(): Promise<void> {
  const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });

  // A string id.
  // @ts-expect-error id is an integer
  await client.GET('/users/{id}', { params: { path: { id: '2' } } });

  // pages() follows lists only, with their own query.
  // @ts-expect-error /users/{id} is no list
  pages(client, '/users/{id}');
  // @ts-expect-error shape B's list has no per_page (shape A's does)
  pages(client, '/users', { per_page: 5 });
  for await (const { items } of pages(client, '/api/users', { per_page: 5 })) {
    // @ts-expect-error shape A's users have first_name, not firstName
    void items[0]?.firstName;
  }

  // A missing e-mail, in either shape.
  // @ts-expect-error email is required
  await client.POST('/api/users', { body: { name: 'Thomas Anderson' } });
  // @ts-expect-error email is required
  await client.POST('/users', { body: { firstName: 'Thomas', lastName: 'Anderson' } });

  // An unknown path.
  // @ts-expect-error no such path in the contract
  await client.GET('/user/{id}', { params: { path: { id: 2 } } });

  // A shape B body sent to a shape A path, and the other way round.
  // @ts-expect-error shape A takes name and email
  await client.POST('/api/users', { body: { firstName: 'Thomas', lastName: 'Anderson', email: 'a@example.com' } });
  // @ts-expect-error shape B takes firstName, lastName and email
  await client.PUT('/users/{id}', { params: { path: { id: 1 } }, body: { name: 'Thomas Anderson', email: 'a@example.com' } });

  // A method the path does not have.
  // @ts-expect-error /users/{id} has no POST
  await client.POST('/users/{id}', { params: { path: { id: 1 } } });

  // Members the contract does not have, at any depth: no silent typo.
  // @ts-expect-error emial is no member of a user
  await client.POST('/users', { body: { firstName: 'A', lastName: 'B', email: 'a@example.com', emial: 'a@example.com' } });
  // @ts-expect-error admin is no member of a user
  await client.PUT('/api/users/{id}', { params: { path: { id: 1 } }, body: { name: 'A B', email: 'a@example.com', admin: true } });
  // @ts-expect-error serach is no parameter of the list
  await client.GET('/users', { params: { query: { serach: 'ada' } } });
  // @ts-expect-error param is not params
  await client.GET('/users/{id}', { param: { path: { id: 1 } } });
  // An unknown member of the init is an error on every operation, those whose parameters are all optional too.
  // @ts-expect-error param is not params, on a list whose parameters are all optional
  await client.GET('/users', { param: { query: { q: 'ada' } } });
  // @ts-expect-error sginal is not signal
  await client.GET('/users', { sginal: AbortSignal.timeout(1000) });
  // openapi-fetch's own members, and fetch's, still pass.
  await client.GET('/users', { signal: AbortSignal.timeout(1000), cache: 'no-store' });
  await client.GET('/users', {
    baseUrl: 'http://127.0.0.1:3001',
    headers: { 'x-custom-header': 'team-a' },
    parseAs: 'json',
    fetch: (request: Request) => fetch(request),
    querySerializer: { array: { style: 'form', explode: false } },
    pathSerializer: (pathname) => pathname,
    middleware: [{ onRequest: ({ request }) => request }],
    credentials: 'include',
  });
  await client.POST('/users', { body: { firstName: 'A', lastName: 'B', email: 'a@example.com' }, bodySerializer: (body) => JSON.stringify(body) });

  // sort is a union of each shape's fields, with `-` for descending.
  await client.GET('/api/users', { params: { query: { sort: 'last_name,-first_name' } } });
  await client.GET('/users', { params: { query: { sort: '-lastName,firstName,email,id' } } });
  // @ts-expect-error shape B sorts by lastName, not last_name
  await client.GET('/users', { params: { query: { sort: 'last_name' } } });
  // @ts-expect-error fields are separated by commas, without spaces
  await client.GET('/api/users', { params: { query: { sort: 'last_name, first_name' } } });

  // Outcomes are told apart by status: after 404, error is the problem, not `Problem | undefined`.
  const one = await client.GET('/users/{id}', { params: { path: { id: 2 } } });
  if (one.status === 404) {
    const problem: Problem = one.error;
    // @ts-expect-error a 404 has no data
    const user: { id: number } = one.data;
    void problem;
    void user;
  }
  if (one.status === 200) {
    const etag: string = one.headers.ETag;
    const email: string = one.data.email;
    // @ts-expect-error a 200 carries no error
    const problem: Problem = one.error;
    void etag;
    void email;
    void problem;
  }
  // @ts-expect-error GET /users/{id} has no 201
  if (one.status === 201) void one;
  // A 304 is "not modified" data, not a Problem.
  if (one.status === 304) {
    const notModified: true = one.notModified;
    // @ts-expect-error a 304 carries no error
    const problem: Problem = one.error;
    void notModified;
    void problem;
  }
  // Typed headers: a count is a number; an undeclared header is no member.
  const list = await client.GET('/api/users');
  if (list.status === 200) {
    const total: number = list.headers['X-Total-Count'];
    // @ts-expect-error X-Total-Count is a number
    const text: string = list.headers['X-Total-Count'];
    // @ts-expect-error a list answer has no ETag
    void list.headers.ETag;
    void total;
    void text;
  }
  // Retry-After, in seconds, on the answers that declare it.
  const created = await client.POST('/users', { body: { firstName: 'A', lastName: 'B', email: 'a@example.com' } });
  if (created.status === 429) {
    const seconds: number = created.retryAfter;
    // The header is the same number of seconds: its schema admits only digits.
    const header: typeof created.retryAfter = created.headers['Retry-After'];
    void seconds;
    void header;
  }
  if (created.status === 422) {
    // @ts-expect-error a 422 does not say when to try again
    void created.retryAfter;
    // Problem types are the service's own kinds: a typo is an error.
    const kind: ProblemType = created.error.type;
    // @ts-expect-error no such kind of problem
    if (created.error.type === 'urn:user-records:problem:validation-faild') void kind;
  }

  // changeUser's patch is in the path's shape.
  await changeUser(client, '/users/{id}', 2, (user) => ({ lastName: user.lastName.toUpperCase() }));
  // @ts-expect-error shape A's users have first_name; its patch takes name
  await changeUser(client, '/api/users/{id}', 2, (user) => ({ firstName: user.first_name }));

  // Correct use type-checks, and responses are typed from the contract.
  const { data, error } = await client.GET('/api/users/{id}', { params: { path: { id: 2 } } });
  if (data) {
    const firstName: string = data.data.first_name;
    // @ts-expect-error shape A has no firstName
    void data.data.firstName;
    void firstName;
  }
  if (error) {
    const problem: Problem = error;
    void problem.errors?.[0]?.path;
  }
  const page = await client.GET('/api/users', { params: { query: { page: 1, per_page: 6 } } });
  const total: number | undefined = page.data?.total;
  void total;

  // The sandbox's controls are the sandbox variant's: production's client does not have them.
  // @ts-expect-error production takes no delay
  await client.GET('/users', { params: { query: { delay: 1 } } });
  // @ts-expect-error production takes no Prefer
  await client.GET('/users/{id}', { params: { path: { id: 2 }, header: { Prefer: 'code=404' } } });
  // @ts-expect-error production has no reset
  await client.POST('/__sandbox/reset', { body: {} });
  const sandbox = createSandboxClient({ baseUrl: 'http://127.0.0.1:4011' });
  await sandbox.GET('/users', { params: { query: { delay: 1.5 } } });
  await sandbox.GET('/users/{id}', { params: { path: { id: 2 }, header: { Prefer: 'code=404' } } });
  const reset = await sandbox.POST('/__sandbox/reset', { body: {} });
  const resetStatus: 204 | 400 | 404 | 408 | 413 | 415 | 417 | 422 | 431 | 500 | 503 = reset.status;
  void resetStatus;
  // @ts-expect-error delay is a number of seconds
  await sandbox.GET('/users', { params: { query: { delay: 'slow' } } });
  // A function that takes either client calls the operations both have, with the parameters both take.
  const firstEmail = async (either: AnyUserRecordsClient) => {
    const listed = await either.GET('/users', { params: { query: { limit: 1 } } });
    // @ts-expect-error production takes no delay, so neither does a function that takes either client
    await either.GET('/users', { params: { query: { delay: 1 } } });
    return listed.status === 200 ? listed.data[0]?.email : undefined;
  };
  await firstEmail(client);
  await firstEmail(sandbox);
  // The helpers take either client.
  for await (const { items } of pages(sandbox, '/users', { limit: 5 })) void items;
  await changeUser(sandbox, '/users/{id}', 2, (user) => ({ lastName: user.lastName.toUpperCase() }));
}
