import { createUserRecordsClient, type BasicCredentials } from '../../../client/src/index.js';

// A frontend team's page: bundled with esbuild and run in Chromium, it uses the client package against a
// service on another origin. `stateful` is false against the Prism mock, which remembers nothing.

/** What the page did, step by step, for the test to check. */
export interface BrowserRun {
  readonly steps: Record<string, unknown>;
  readonly origin: string;
}

async function run(baseUrl: string, credentials: BasicCredentials, stateful: boolean): Promise<BrowserRun> {
  const client = createUserRecordsClient({ baseUrl, credentials, headers: { 'x-custom-header': 'frontend' } });
  const steps: Record<string, unknown> = {};

  const a = await client.POST('/api/users', { body: { name: 'Browser Person', email: 'browser.person@example.com' } });
  steps.createA = { status: a.response.status, location: a.response.headers.get('location'), etag: a.response.headers.get('etag'), data: a.data };
  const idA = stateful ? a.data!.id : 2;
  const readA = await client.GET('/api/users/{id}', { params: { path: { id: idA } } });
  steps.readA = { status: readA.response.status, data: readA.data };
  const putA = await client.PUT('/api/users/{id}', { params: { path: { id: idA } }, body: { name: 'Browser Renamed', email: 'renamed@example.com' } });
  steps.replaceA = { status: putA.response.status, data: putA.data };
  steps.deleteA = { status: (await client.DELETE('/api/users/{id}', { params: { path: { id: idA } } })).response.status };

  const b = await client.POST('/users', { body: { firstName: 'Browser', lastName: 'Local', email: 'browser.local@example.com' } });
  steps.createB = { status: b.response.status, data: b.data };
  const idB = stateful ? b.data!.id : 2;
  const etag = (await client.GET('/users/{id}', { params: { path: { id: idB } } })).response.headers.get('etag') ?? '*';
  const putB = await client.PUT('/users/{id}', {
    params: { path: { id: idB }, header: { 'If-Match': etag } },
    body: { firstName: 'Browser', lastName: 'Replaced', email: 'browser.local@example.com' },
  });
  steps.replaceB = { status: putB.response.status, data: putB.data };
  steps.readB = { status: (await client.GET('/users/{id}', { params: { path: { id: idB } } })).response.status };
  steps.deleteB = { status: (await client.DELETE('/users/{id}', { params: { path: { id: idB } } })).response.status };
  const gone = await client.GET('/users/{id}', { params: { path: { id: stateful ? idB : 999 } }, headers: stateful ? {} : { Prefer: 'code=404' } });
  steps.afterDelete = { status: gone.response.status, problem: gone.error };

  // A page of a list, and the page its `next` link names (a cursor made and read in the browser, by the MSW handlers).
  const first = await client.GET('/api/users', { params: { query: { per_page: 5, sort: '-last_name' } } });
  const next = /<([^>]*)>; rel="next"/.exec(first.response.headers.get('link') ?? '')?.[1];
  const second = next === undefined ? undefined : await (await fetch(new URL(next, baseUrl))).json();
  steps.pages = { first: first.data?.data.map((user) => user.id), second: second?.data?.map((user: { id: number }) => user.id) };

  const secret = await client.GET('/protected-resource', { parseAs: 'text' });
  steps.protected = { status: secret.response.status, text: secret.data };
  const anonymous = await createUserRecordsClient({ baseUrl }).GET('/protected-resource', { parseAs: 'text' });
  steps.anonymous = { status: anonymous.response.status };
  return { steps, origin: window.location.origin };
}

declare global {
  interface Window {
    runUserRecords: typeof run;
  }
}
window.runUserRecords = run;
document.body.dataset.ready = 'true';
