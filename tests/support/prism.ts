import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CONTRACT_FILE, SANDBOX_CONTRACT_FILE } from '../../server/http/contract/contract-file.js';
import { freePort } from './ports.js';

const PRISM = fileURLToPath(new URL('../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));

/** A Prism process the test started, and the way to stop it (by PID). */
export interface PrismProcess {
  readonly url: string;
  stop(): Promise<void>;
}

function waitForListening(child: ChildProcess, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`Prism did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`Prism is listening on ${url}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited with ${code}:\n${output}`));
    });
  });
}

/** Starts `prism mock` or `prism proxy` on the contract, on a free port; resolves once it listens. */
export async function startPrism(mode: 'mock' | ['proxy', string], extraArgs: readonly string[] = []): Promise<PrismProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The mock serves the sandbox variant, as `make mock` does; a proxy validates a production server's answers.
  const command = mode === 'mock' ? ['mock', SANDBOX_CONTRACT_FILE] : ['proxy', CONTRACT_FILE, mode[1]];
  const child = spawn(process.execPath, [PRISM, ...command, '-p', String(port), '-h', '127.0.0.1', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await waitForListening(child, url);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
