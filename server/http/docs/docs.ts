import { createReadStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { documentHeaders } from '../security/browser-headers.js';
import type { Contract } from '../contract/contract.js';
import { noRoute } from '../routing/request-checks.js';
import { isValidHost } from '../protocol/request-hygiene.js';

// The interactive API reference at /docs: Swagger UI, because it alone of the candidates has "Try it out"
// and runs from its npm package's static files with no inline script (Redoc has no "Try it out"; the
// Scalar releases that install on Node 20 are old). Served from node_modules: no CDN, no network.

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Files of swagger-ui-dist the page loads, with their media types (a Map: `constructor` is no file). */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
]);

/** The page, its files named from the root, so that it is the same page at /docs and /docs/. */
const page = (docs: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>User Records Service: API reference</title>
  <link rel="stylesheet" href="${docs}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${docs}/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${docs}/swagger-ui-bundle.js"></script>
  <script src="${docs}/swagger-ui-standalone-preset.js"></script>
  <script src="${docs}/docs.js"></script>
</body>
</html>
`;

// Started from a file rather than inline, so the strict Content-Security-Policy (script-src 'self') holds.
const start = (basePath: string) => `window.ui = SwaggerUIBundle({
  url: '${basePath}/docs/contract.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'BaseLayout',
  persistAuthorization: false,
});
`;

/**
 * What the page needs and nothing more: its own scripts and styles, and calls to this origin and to the
 * servers the contract lists (the Prism mock and the sandbox), which its server list offers for "Try it out".
 */
const docsCsp = (servers: readonly string[]) => ({
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'", ...servers],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
});

/**
 * The origin the client reached, as the browser spells it. Behind a trusted proxy Koa reads it from
 * X-Forwarded-Host and -Proto, which the proxy may pass on from the client unchecked: only a valid host and
 * http or https are taken from them, otherwise the Host header (checked by requestHygiene) and plain http.
 */
function reachedAs(ctx: Context): string {
  const protocol = ctx.protocol === 'https' ? 'https' : 'http';
  const host = isValidHost(ctx.host) ? ctx.host : ctx.get('host');
  return `${protocol}://${host}`;
}

/**
 * The contract as the reference page shows it: optional parameters without their examples. "Try it out"
 * fills each parameter with its example and sends it, and an optional one would go unasked (`If-None-Match:
 * "1"` turns a read into a 304, a fixed `Idempotency-Key` replays the first create); the contract keeps them
 * for the tools that build requests from it alone (Dredd, Schemathesis).
 */
export function pageContract(document: Record<string, unknown>): Record<string, unknown> {
  const components = (document.components ?? {}) as { parameters?: Record<string, Record<string, unknown>> };
  const parameters = Object.fromEntries(
    Object.entries(components.parameters ?? {}).map(([name, parameter]) => {
      if (parameter.required === true) return [name, parameter];
      const { example: _example, examples: _examples, ...rest } = parameter;
      return [name, rest];
    }),
  );
  return { ...document, components: { ...components, parameters } };
}

/**
 * /docs (the reference page, which loads /docs/contract.json: pageContract), /openapi.json and /openapi.yaml
 * (the contract this server serves, `contractFile` as written: the production contract, or in sandbox mode its
 * sandbox variant). The JSON names this server, as reached by the browser, as the first server, so that
 * "Try it out" calls it whatever its port or prefix.
 */
export function createDocsRouter(contract: Contract, contractFile: string, basePath: string): Router {
  const router = new Router({ prefix: basePath || undefined, strict: true });
  const yamlText = readFileSync(contractFile, 'utf8');
  // The service's root leads to its reference, where a person who opens the bare address wants to be.
  router.get('/', (ctx) => {
    ctx.redirect(`${basePath}/docs`);
  });
  router.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = yamlText;
  });
  /** `document` with this server, as reached by the browser, first among its servers. */
  const servingHere = (ctx: Context, document: Record<string, unknown>) => {
    const servers = (document.servers ?? []) as { url: string }[];
    const here = { url: `${reachedAs(ctx)}${basePath}`, description: 'This server' };
    return { ...document, servers: [here, ...servers.filter((server) => server.url !== here.url)] };
  };
  router.get('/openapi.json', (ctx) => {
    ctx.body = servingHere(ctx, contract.document);
  });
  const listed = ((contract.document.servers ?? []) as { url: string }[]).map((server) => new URL(server.url).origin);
  const shown = pageContract(contract.document);
  const [html, script] = [page(`${basePath}/docs`), start(basePath)];
  router.get(['/docs', '/docs/', '/docs/:file'], documentHeaders(docsCsp(listed)), (ctx) => {
    const file = ctx.params.file ?? '';
    if (file === '' || file === 'index.html') {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = html;
    } else if (file === 'contract.json') {
      ctx.body = servingHere(ctx, shown);
    } else if (file === 'docs.js') {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = script;
    } else if (ASSETS.has(file)) {
      ctx.type = ASSETS.get(file)!;
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = createReadStream(join(SWAGGER_UI, file));
    } else {
      throw noRoute(ctx.method, ctx.path, `${basePath}/docs`);
    }
  });
  return router;
}
