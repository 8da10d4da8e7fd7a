import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { commandRuns, toolReady } from './system-tools.js';

// podman, as `make image` runs it: with deploy/containers.conf (containers keep the limits podman has instead
// of raising RLIMIT_NOFILE, which this project's test machines refuse).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENV = { ...process.env, CONTAINERS_CONF: `${ROOT}deploy/containers.conf` };
const run = promisify(execFile);

/** The image `make image` builds. */
export const IMAGE = 'localhost/user-records-service:latest';
/** The base it is built on. */
export const BASE_IMAGE = 'node:24-bookworm-slim';

/** Runs podman; resolves with what it printed on stdout (trimmed), rejects with its stderr when it fails. */
export function podman(...args: string[]): Promise<string> {
  return podmanWithInput(undefined, ...args);
}

/** Runs podman with `input` on its standard input (none when undefined), as podman() does. */
export async function podmanWithInput(input: string | undefined, ...args: string[]): Promise<string> {
  try {
    const running = run('podman', args, { env: ENV, cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    running.child.stdin?.end(input ?? '');
    const { stdout } = await running;
    return stdout.trim();
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`podman ${args.join(' ')} failed: ${stderr || message}`);
  }
}

/** True when podman can build and run images here (root: the base image is made with debootstrap). */
export function podmanAvailable(): boolean {
  const problem = !commandRuns('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], ENV)
    ? 'podman is missing or does not run'
    : process.getuid?.() !== 0
      ? 'the tests are not running as root'
      : undefined;
  return toolReady(problem, 'the container tests', 'make container-tools installs podman');
}

/** `describe` that is reported as skipped where podman cannot run. */
export const describeWithPodman = (name: string, body: () => void) => (podmanAvailable() ? describe : describe.skip)(name, body);

/** Builds the image as an operator would: `make image` (the base is made first where it is missing). */
export function buildImage(): void {
  execFileSync('make', ['-s', 'image'], { cwd: ROOT, env: process.env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
}

/** A container of the image, and where it answers. */
export interface Container {
  readonly id: string;
  readonly url: string;
  /** Everything it logged so far. */
  logs(): Promise<string>;
}

/**
 * Starts a container of the image with a read-only root, port 3000 published on a free loopback port; resolves
 * once /readyz answers 200. podman gives a read-only root tmpfs folders (/tmp, /var/tmp, /run) unless
 * `tmpfs: false`, as Kubernetes' readOnlyRootFilesystem and compose's read_only do not.
 */
export async function startContainer(options: { volume: string; env?: Record<string, string>; readOnly?: boolean; tmpfs?: boolean }): Promise<Container> {
  const env = Object.entries({ BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'container-test-pass', ...options.env }).flatMap(([key, value]) => [
    '-e',
    `${key}=${value}`,
  ]);
  const id = await podman(
    'run',
    '-d',
    ...(options.readOnly === false ? [] : ['--read-only', `--read-only-tmpfs=${options.tmpfs !== false}`]),
    '-p',
    '127.0.0.1::3000',
    '-v',
    `${options.volume}:/data`,
    ...env,
    IMAGE,
  );
  const url = `http://${(await podman('port', id, '3000/tcp')).split('\n')[0]}`;
  const logs = async () => {
    const { stdout, stderr } = await run('podman', ['logs', id], { env: ENV, maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  };
  for (let tries = 0; ; tries++) {
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (ready === 200) return { id, url, logs };
    if (tries >= 300) throw new Error(`the container did not become ready within 30 s:\n${await logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
