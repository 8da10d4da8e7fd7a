// The server as it runs, in two files bundled by esbuild from tsc's output: the main thread's
// (dist/server/main.js, in place of tsc's) and the SQLite store writer thread's (dist/server/writer-thread.js,
// beside it, where the bundled main thread starts it: server/db/sqlite/store-writer.ts asks for ./writer-thread.js next
// to its own code). tsc's per-module files stay for the command-line tools and the benchmarks' targets.
//
// Why: Node keeps every ES module it loads as a record of its own. Kysely alone is 304 of them, 25 MiB of
// resident memory in each of the two isolates (6 MiB bundled); the whole server, bundled, idles 10 MiB smaller
// and starts about 150 ms sooner (docs/benchmarks.md).
//
// Left outside the bundles, loaded from node_modules as before: better-sqlite3 (a native addon that finds its
// binary beside its own files), the parts loaded only when configured (pg, ioredis, OpenTelemetry's SDK: one
// copy of @opentelemetry/api for the SDK and the service), and swagger-ui-dist (files served from its folder).
import { build } from 'esbuild';

await build({
  entryPoints: { main: 'dist/server/main.js', 'writer-thread': 'dist/server/db/sqlite/writer-thread.js' },
  outdir: 'dist/server',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // Chained to tsc's maps: a stack trace under --enable-source-maps names the TypeScript source.
  sourcemap: 'linked',
  external: ['better-sqlite3', 'pg', 'ioredis', 'swagger-ui-dist', '@opentelemetry/*'],
  // The CommonJS packages inside (Koa's, pino's) call require() for Node's own modules.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  logLevel: 'warning',
});
