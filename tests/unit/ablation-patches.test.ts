import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// make bench takes each bespoke performance part out by a patch of bench/ablations/ (bench/ablation.mjs). A
// patch whose lines the code has since changed would fail only there, hours after the change: each must still
// apply to the tree as it is.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PATCHES = readdirSync(join(ROOT, 'bench/ablations')).filter((name) => name.endsWith('.patch'));

test('there are ablation patches to check', () => expect(PATCHES.length).toBeGreaterThan(0));

test.each(PATCHES)('bench/ablations/%s still applies to the tree', (patch) => {
  expect(() => execFileSync('git', ['apply', '--check', join('bench/ablations', patch)], { cwd: ROOT, stdio: 'pipe' })).not.toThrow();
});
