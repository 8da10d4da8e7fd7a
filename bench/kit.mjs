// `make bench`: what the frontend kit costs the app that uses it, measured on the package as published
// (client/dist): the size of each entry once an app's bundler has it, the time to import the MSW handlers and
// make them, the first answer, and the npx sandbox's start. Results in bench/results/kit.md. Not a test: the
// size budget is asserted by tests/client/bundle-size.test.ts; times are measured here, never asserted.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { root } from './lib.mjs';

const RUNS = Number(process.env.KIT_RUNS ?? 7);
const client = join(root, 'client');
execFileSync('npm', ['run', 'build', '--silent'], { cwd: client, stdio: 'inherit' });

/** An entry of the package as an app's bundler sees it: everything it imports but msw, minified. */
async function size(entry) {
  const result = await build({
    entryPoints: [join(client, entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['msw'],
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  return { minified: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

/** One fresh process: msw loaded first (the app's own cost), then the kit, createMockHandlers, a first answer. */
const probe = `
const t0 = performance.now();
const { setupServer } = await import('msw/node');
const t1 = performance.now();
const { createMockHandlers } = await import(${JSON.stringify(join(client, 'dist/client/src/msw.js'))});
const t2 = performance.now();
const handlers = createMockHandlers({ baseUrl: 'http://api.test' });
const t3 = performance.now();
const server = setupServer(...handlers);
server.listen({ onUnhandledRequest: 'error' });
const t4 = performance.now();
const answer = await fetch('http://api.test/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }) });
if (answer.status !== 201) throw new Error('the first create was a ' + answer.status);
const t5 = performance.now();
server.close();
console.log(JSON.stringify({ msw: t1 - t0, kit: t2 - t1, create: t3 - t2, firstAnswer: t5 - t4 }));
`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function timings() {
  const runs = Array.from({ length: RUNS }, () =>
    JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' })),
  );
  return Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(runs.map((run) => run[key]))]));
}

/** From spawn to the sandbox's "listening" line. */
function sandboxStart() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(client, 'bin/user-records-sandbox.js'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk) => {
      if (!/"url":/.test(chunk.toString())) return;
      const ms = performance.now() - started;
      child.once('exit', () => resolve(ms));
      child.kill('SIGTERM');
    });
    child.once('error', reject);
  });
}

const handlers = await size('dist/client/src/msw.js');
const typed = await size('dist/client/src/index.js');
const times = timings();
const starts = [];
for (let i = 0; i < RUNS; i++) starts.push(await sandboxStart());
const sandbox = median(starts);

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const ms = (value) => `${value.toFixed(1)} ms`;
const report = `# The frontend kit: size and start-up

Measured by \`make bench\` (bench/kit.mjs) on the package as published (client/dist), Node ${process.versions.node};
times are the median of ${RUNS} fresh processes.

| entry, bundled for a browser (msw excluded) | minified | gzip |
|---|---:|---:|
| \`@user-records/client/msw\` (the handlers) | ${kB(handlers.minified)} | ${kB(handlers.gzip)} |
| \`@user-records/client\` (the typed client) | ${kB(typed.minified)} | ${kB(typed.gzip)} |

| step | time |
|---|---:|
| import msw/node (the app's own cost, for scale) | ${ms(times.msw)} |
| import \`@user-records/client/msw\` | ${ms(times.kit)} |
| first \`createMockHandlers()\` | ${ms(times.create)} |
| import + first \`createMockHandlers()\` | ${ms(times.kit + times.create)} |
| first answer (a create: checks, validation, store) | ${ms(times.firstAnswer)} |
| \`npx user-records-sandbox\`: start to listening | ${ms(sandbox)} |
`;
writeFileSync(join(root, 'bench/results/kit.md'), report);
console.log(report);
