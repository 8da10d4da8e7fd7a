import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { routes } from '../../generated/routes.js';
import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { ARTIFACTS, describeInBrowser, launchChromium } from '../support/browser.js';
import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';

// The API reference at /docs, in a real (headless) Chromium: it loads without console errors under the
// strict Content-Security-Policy, lists every operation, and "Try it out" calls this very server.

describeInBrowser('/docs in Chromium', () => {
  const sut = useTestServer();
  let chromium: { browser: Browser; close(): Promise<void> };
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    chromium = await launchChromium();
    page = await chromium.browser.newPage({ viewport: { width: 1280, height: 2000 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page: ${error.message}`));
    await page.goto(`${sut.server.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
  }, 60_000);
  afterAll(() => chromium?.close());

  test('lists every operation of the contract, with no console errors', async () => {
    const listed = await page.$$eval('.opblock', (blocks) => blocks.map((block) => block.id));
    // A server not in sandbox mode serves the production contract: the route table's sandbox control is not there.
    const production = loadContract();
    const served = routes.filter((route) => production.has(route.operationId));
    expect(served.length).toBe(routes.length - 1);
    expect(listed).toHaveLength(served.length);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-page.png') });
    for (const route of served) expect(listed.some((id) => id.endsWith(`-${route.operationId}`))).toBe(true);
    expect(problems).toEqual([]);
  });

  test('"Try it out" on GET /api/users/{id} shows the user from this server', async () => {
    const operation = page.locator('[id$="-getDemoUser"]');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('tr[data-param-name="id"] input').fill('2');
    await operation.getByRole('button', { name: 'Execute' }).click();
    const body = operation.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor({ timeout: 10_000 });
    expect(await body.textContent()).toContain('"first_name": "Tobias"');
    expect(await operation.locator('.live-responses-table tbody .response-col_status').first().textContent()).toContain('200');
    await operation.screenshot({ path: join(ARTIFACTS, 'docs-try-it-out.png') });
    expect(problems).toEqual([]);
  });

  test('"Authorize" with Basic credentials opens the protected resource', async () => {
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    const dialog = page.locator('.dialog-ux');
    await dialog.locator('#auth-basic-username').fill(TEST_CREDENTIALS.username);
    await dialog.locator('#auth-basic-password').fill(TEST_CREDENTIALS.password);
    await dialog.locator('button.authorize').click();
    await dialog.locator('button.btn-done').click();
    const operation = page.locator('[id$="-getProtectedResource"]');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    const body = operation.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor({ timeout: 10_000 });
    expect(await body.textContent()).toContain(`Hello, ${TEST_CREDENTIALS.username}. You are authenticated.`);
  });
});

test('the contract is served as JSON, naming this server first, and as YAML', async () => {
  const { startTestServer } = await import('../support/test-server.js');
  const server = await startTestServer({ env: { BASE_PATH: '/v1' } });
  try {
    const json = (await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string; servers: { url: string }[] };
    expect(json.openapi).toBe('3.0.3');
    expect(json.servers[0]!.url).toBe(server.url);
    const yaml = await fetch(`${server.url}/openapi.yaml`);
    expect(yaml.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(await yaml.text()).toMatch(/^openapi: 3\.0\.3$/m);
    expect((await fetch(`${server.url}/docs/`)).status).toBe(200);
    // Under a base path the page names its files, and the contract, under it.
    const page = await (await fetch(`${server.url}/docs`)).text();
    expect(page).toContain('<script src="/v1/docs/swagger-ui-bundle.js"></script>');
    expect(await (await fetch(`${server.url}/docs/docs.js`)).text()).toContain("url: '/v1/docs/contract.json'");
  } finally {
    await server.cleanup();
  }
});
