import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

// What `@user-records/client/msw` adds to an app's test or browser bundle, as a bundler makes it: its budget
// (issue 27) is 30 kB gzip, msw itself excluded. Sizes do not depend on the machine, so this is a test; the
// times of importing and starting the kit are measured by `make bench` (bench/kit.mjs).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function bundle(entry: string) {
  const result = await build({
    entryPoints: [`${ROOT}/${entry}`],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['msw'],
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const code = result.outputFiles[0]!.contents;
  return { gzip: gzipSync(code, { level: 9 }).length, inputs: Object.keys(result.metafile.inputs) };
}

test("the MSW handlers bundle to at most 30 kB gzip, without ajv or the contract's prose", async () => {
  const { gzip, inputs } = await bundle('client/src/msw.ts');
  console.log(`@user-records/client/msw: ${(gzip / 1000).toFixed(1)} kB gzip`);
  expect(gzip).toBeLessThanOrEqual(30_000);
  // The validators are compiled ahead (generated/validators.ts); the contract is the one without descriptions.
  expect(inputs.filter((input) => /node_modules\/(ajv|ajv-formats|fast-uri)\//.test(input))).toEqual([]);
  expect(inputs).not.toContain('generated/contract.ts');
  expect(inputs).toContain('generated/runtime-contract.ts');
});

test('the typed client alone bundles to at most 8 kB gzip', async () => {
  const { gzip, inputs } = await bundle('client/src/index.ts');
  console.log(`@user-records/client: ${(gzip / 1000).toFixed(1)} kB gzip`);
  expect(gzip).toBeLessThanOrEqual(8_000);
  expect(inputs.some((input) => input.includes('contract'))).toBe(false);
});
