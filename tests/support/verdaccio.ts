import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmTool } from './npm-tools.js';
import { freePort } from './ports.js';

// A real npm registry on loopback (Verdaccio, from npm), to publish the kit to and install it from, as a
// frontend team installs from their registry. It serves only what is published to it (`@user-records/*`);
// a consumer takes everything else from the usual registry.

const VERSION = '6.10.4';
/** Verdaccio from npm, into .tools/ once (about 15 s). verdaccio 6 asks for node-fetch@cjs, a dist-tag the
 * registry does not serve; 2.7.0 is that line. */
const installVerdaccio = () => npmTool('verdaccio', VERSION, 'verdaccio/bin/verdaccio', { overrides: { 'node-fetch': '2.7.0' } });

export interface Registry {
  readonly url: string;
  /** The environment for npm against this registry: its address, and a token it accepts for publishing. */
  readonly env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export async function startRegistry(): Promise<Registry> {
  const bin = installVerdaccio();
  const dir = mkdtempSync(join(tmpdir(), 'user-records-registry-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      `storage: ${join(dir, 'storage')}`,
      'uplinks: {}',
      'packages:',
      "  '@user-records/*':",
      '    access: $all',
      '    publish: $all',
      "  '**':",
      '    access: $all',
      'log: { type: stdout, format: json, level: warn }',
      '',
    ].join('\n'),
  );
  // Any token: the registry lets anyone publish; npm sends none without one.
  writeFileSync(join(dir, '.npmrc'), `//127.0.0.1:${port}/:_authToken=test\n`);
  const child = spawn(process.execPath, [bin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`Verdaccio exited with ${child.exitCode}:\n${printed}`);
    if (
      await fetch(`${url}-/ping`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    if (tries > 300) throw new Error(`Verdaccio did not answer within 30 s:\n${printed}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    env: { ...process.env, npm_config_registry: url, npm_config_userconfig: join(dir, '.npmrc') },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
