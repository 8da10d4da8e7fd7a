import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Programs from npm that only tests run (Verdaccio, Redocly CLI): each installed once into .tools/, at the
// version a test names, rather than made a dependency of the project.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The path of `bin` (relative to node_modules/) in `name@version`, installed into .tools/<name>-<version>
 * when it is not there yet; `manifest` adds to the install's package.json (overrides, say).
 */
export function npmTool(name: string, version: string, bin: string, manifest: Record<string, unknown> = {}): string {
  const home = join(ROOT, `.tools/${name.replace(/^@[^/]+\//, '')}-${version}`);
  const path = join(home, 'node_modules', bin);
  if (existsSync(path)) return path;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'package.json'), JSON.stringify({ name: `${name.replace(/[@/]/g, '-')}-for-tests`, private: true, ...manifest }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `${name}@${version}`], { cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
  return path;
}
