import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { DEMO_USERS } from '../../server/db/demo-data.js';
import { describeInBrowser, launchChromium } from '../support/browser.js';
import { startPrism, type PrismProcess } from '../support/prism.js';
import { TEST_CREDENTIALS, startTestServer, type TestServer } from '../support/test-server.js';
import type { BrowserRun } from './app/main.js';

// The client package in a real browser: a page bundled with esbuild, served from its own origin, calls the
// real server on another origin (CORS), then the Prism mock, then the package's own MSW handlers in a
// service worker, as a frontend team's app would.

let page: Server;
let pageOrigin: string;

/** A page's script, bundled for the browser as a frontend's build would. */
async function bundled(entry: string): Promise<string> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
  });
  return bundle.outputFiles[0]!.text;
}

const pageHtml = (script: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>frontend</title></head><body><script type="module" src="${script}"></script></body></html>`;

async function servePage(): Promise<void> {
  const files: Record<string, readonly [string, string]> = {
    '/app.js': ['text/javascript', await bundled('./app/main.ts')],
    '/msw-app.js': ['text/javascript', await bundled('./app/msw-main.ts')],
    // MSW's service worker script, as `npx msw init public/` copies it into an app.
    '/mockServiceWorker.js': [
      'text/javascript',
      readFileSync(fileURLToPath(new URL('../../node_modules/msw/lib/mockServiceWorker.js', import.meta.url)), 'utf8'),
    ],
    '/msw.html': ['text/html', pageHtml('/msw-app.js')],
  };
  page = createServer((req, res) => {
    const [type, body] = files[req.url ?? ''] ?? ['text/html', pageHtml('/app.js')];
    res.writeHead(200, { 'content-type': `${type}; charset=utf-8` }).end(body);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
}

describeInBrowser('the client package in Chromium', () => {
  let chromium: { browser: Browser; close(): Promise<void> };
  let tab: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    await servePage();
    chromium = await launchChromium();
    tab = await chromium.browser.newPage();
    tab.on('pageerror', (error) => problems.push(error.message));
    await tab.goto(pageOrigin);
    await tab.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  const runIn = (baseUrl: string, stateful: boolean) =>
    tab.evaluate(([url, credentials, isStateful]) => window.runUserRecords(url, credentials, isStateful), [
      baseUrl,
      TEST_CREDENTIALS,
      stateful,
    ] as const) as Promise<BrowserRun>;

  describe('against the real server on another origin', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ env: { CORS_ORIGINS: pageOrigin } });
    });
    afterAll(() => server?.cleanup());

    test('creates, reads, replaces and deletes through both shapes, and calls the protected resource', async () => {
      const { steps, origin } = await runIn(server.url, true);
      expect(origin).toBe(pageOrigin);
      expect(new URL(server.url).origin).not.toBe(pageOrigin);
      expect(steps.createA).toMatchObject({
        status: 201,
        location: expect.stringMatching(/^\/api\/users\/\d+$/),
        etag: '"1"',
        data: { name: 'Browser Person' },
      });
      expect(steps.readA).toMatchObject({ status: 200, data: { data: { first_name: 'Browser', last_name: 'Person' } } });
      expect(steps.replaceA).toMatchObject({ status: 200, data: { name: 'Browser Renamed', email: 'renamed@example.com' } });
      expect(steps.deleteA).toEqual({ status: 204 });
      expect(steps.createB).toMatchObject({ status: 201, data: { firstName: 'Browser', lastName: 'Local' } });
      expect(steps.replaceB).toMatchObject({ status: 200, data: { lastName: 'Replaced' } });
      expect(steps.readB).toEqual({ status: 200 });
      expect(steps.deleteB).toEqual({ status: 204 });
      expect(steps.afterDelete).toMatchObject({ status: 404, problem: { status: 404, title: 'Not Found' } });
      expect(steps.protected).toEqual({ status: 200, text: `Hello, ${TEST_CREDENTIALS.username}. You are authenticated.` });
      expect(steps.anonymous).toEqual({ status: 401 });
      // Link is exposed to the page (CORS), so that it can follow a list's pages.
      expect(steps.pages).toEqual({ first: [2, 7, 6, 4, 9], second: [3, 11, 8, 1, 10] });
      expect(problems).toEqual([]);
    });

    test('a server that does not list the page origin is refused by the browser itself', async () => {
      const closed = await startTestServer();
      try {
        const read = (url: string) =>
          tab.evaluate(
            (target) =>
              fetch(`${target}/users/1`).then(
                () => 'read',
                () => 'blocked',
              ),
            url,
          );
        expect(await read(server.url)).toBe('read');
        expect(await read(closed.url)).toBe('blocked');
      } finally {
        await closed.cleanup();
      }
    });
  });

  describe('against the Prism mock, as frontend teams start', () => {
    let prism: PrismProcess;
    beforeAll(async () => {
      prism = await startPrism('mock');
    }, 60_000);
    afterAll(() => prism?.stop());

    test('the same page works against the mock, which answers the contract examples', async () => {
      const { steps } = await runIn(prism.url, false);
      expect(steps.createA).toMatchObject({ status: 201, data: { id: 13, name: 'Thomas Anderson' } });
      expect(steps.readA).toMatchObject({ status: 200, data: { data: { id: 2, first_name: DEMO_USERS[1]!.firstName } } });
      expect(steps.replaceA).toMatchObject({ status: 200 });
      expect(steps.deleteA).toEqual({ status: 204 });
      expect(steps.createB).toMatchObject({ status: 201 });
      expect(steps.replaceB).toMatchObject({ status: 200 });
      expect(steps.afterDelete).toMatchObject({ status: 404, problem: { status: 404 } });
      expect(steps.protected).toMatchObject({ status: 200, text: 'Hello, admin. You are authenticated.' });
      expect(steps.anonymous).toEqual({ status: 401 });
    });
  });

  describe('against the MSW handlers of the client package, in a service worker', () => {
    let mocked: Page;
    beforeAll(async () => {
      mocked = await chromium.browser.newPage();
      mocked.on('pageerror', (error) => problems.push(error.message));
      await mocked.goto(`${pageOrigin}/msw.html`);
      await mocked.waitForSelector('body[data-ready="true"]', { state: 'attached' });
      await mocked.evaluate(([url, credentials]) => window.startMocking(url, credentials), [`${pageOrigin}/mock`, TEST_CREDENTIALS] as const);
    }, 60_000);
    afterAll(() => mocked?.close());

    test('the same page works with no server at all: the handlers keep state, as the service does', async () => {
      const { steps } = (await mocked.evaluate(([url, credentials]) => window.runUserRecords(url, credentials, true), [
        `${pageOrigin}/mock`,
        TEST_CREDENTIALS,
      ] as const)) as BrowserRun;
      expect(steps.createA).toMatchObject({ status: 201, location: '/mock/api/users/13', etag: '"1"', data: { id: 13, name: 'Browser Person' } });
      expect(steps.readA).toMatchObject({ status: 200, data: { data: { id: 13, first_name: 'Browser', last_name: 'Person' } } });
      expect(steps.replaceA).toMatchObject({ status: 200, data: { name: 'Browser Renamed', email: 'renamed@example.com' } });
      expect(steps.deleteA).toEqual({ status: 204 });
      expect(steps.createB).toMatchObject({ status: 201, data: { id: 14, firstName: 'Browser', lastName: 'Local' } });
      expect(steps.replaceB).toMatchObject({ status: 200, data: { lastName: 'Replaced' } });
      expect(steps.readB).toEqual({ status: 200 });
      expect(steps.deleteB).toEqual({ status: 204 });
      expect(steps.afterDelete).toMatchObject({ status: 404, problem: { status: 404, title: 'Not Found', detail: 'No user has id 14.' } });
      // By last name, descending: Wren, Okonkwo, Marchetti, Lindqvist, Kowalczyk; then the page after them.
      expect(steps.pages).toEqual({ first: [2, 7, 6, 4, 9], second: [3, 11, 8, 1, 10] });
      expect(steps.protected).toEqual({ status: 200, text: `Hello, ${TEST_CREDENTIALS.username}. You are authenticated.` });
      expect(steps.anonymous).toEqual({ status: 401 });
      expect(problems).toEqual([]);
    });

    test('the page still loads its own files through the worker', async () => {
      const status = await mocked.evaluate(() => fetch('/app.js').then((response) => response.status));
      expect(status).toBe(200);
    });
  });
});
