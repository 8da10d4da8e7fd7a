import { createUserRecordsClient, pages, type Problem } from '../../client/src/index.js';

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
}
