import { setupWorker } from 'msw/browser';
import type { BasicCredentials } from '../../../client/src/index.js';
import { createMockHandlers } from '../../../client/src/msw.js';
import './main.js';

// The same page, with the MSW handlers of the client package started in a service worker, as a frontend
// team's dev build would start them: the page's requests to the mocked base URL never leave the browser.

async function startMocking(baseUrl: string, credentials: BasicCredentials): Promise<void> {
  const handlers = createMockHandlers({ baseUrl, credentials });
  await setupWorker(...handlers).start({ serviceWorker: { url: '/mockServiceWorker.js' }, onUnhandledRequest: 'bypass', quiet: true });
}

declare global {
  interface Window {
    startMocking: typeof startMocking;
  }
}
window.startMocking = startMocking;
