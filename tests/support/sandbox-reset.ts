/**
 * The request that resets a sandbox, or the MSW handlers' store, to the demo data: `{}` as JSON. A browser
 * preflights it (CORS), so no page of another origin can send it; `POST` alone is refused (415).
 */
export const SANDBOX_RESET: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
