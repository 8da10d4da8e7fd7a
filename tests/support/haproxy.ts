import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';
import { commandRuns, toolReady } from './system-tools.js';

// A real HAProxy (Debian's, 2.6) running deploy/haproxy.cfg, the file compose.yaml uses, with the instances'
// addresses given as that file expects them, and its runtime API on a socket of the test's own.

const CONFIG = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url));

export interface HAProxy {
  readonly url: string;
  /** Sends one command to the runtime API; resolves with its answer. */
  command(line: string): Promise<string>;
  /** The operational state of a server of the backend: 'UP', 'DOWN', 'MAINT' or 'DRAIN', and its current sessions. */
  server(name: string): Promise<{ readonly status: string; readonly sessions: number }>;
  output(): string;
  stop(): Promise<void>;
}

/** True when Debian's haproxy is installed. */
export const haproxyAvailable = (): boolean =>
  toolReady(commandRuns('haproxy', ['-v']) ? undefined : 'haproxy is missing', 'the topology tests', 'make deploy-tools installs it');

/** How a test's HAProxy differs from the shipped one: the file's own settings, and the size of the machine. */
export interface HAProxyOptions {
  /** Variables the file reads with a default (MAX_CONNECTIONS_PER_CLIENT, HEADERS_TIMEOUT_MS). */
  readonly env?: Record<string, string>;
  /**
   * Connections the whole proxy holds (`haproxy -n`, its global maxconn), as on a machine with fewer file
   * descriptors: without it HAProxy takes about half of `ulimit -n`, which only a flood too large for a test fills.
   */
  readonly maxConnections?: number;
}

/** Starts HAProxy on a free loopback port in front of the two instances (host:port each). */
export async function startHAProxy(slots: { APP1: string; APP2: string }, options: HAProxyOptions = {}): Promise<HAProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'user-records-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const port = await freePort();
  const size = options.maxConnections === undefined ? [] : ['-n', String(options.maxConnections)];
  const child = spawn('haproxy', ['-db', ...size, '-f', CONFIG], {
    env: { PATH: process.env.PATH ?? '', ...options.env, ...slots, LISTEN_PORT: String(port), STATS_SOCKET: socket },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const command = (line: string) =>
    new Promise<string>((resolve, reject) => {
      const client = connect(socket);
      let answer = '';
      client.on('data', (chunk) => (answer += chunk.toString()));
      client.on('end', () => resolve(answer));
      client.on('error', reject);
      client.end(`${line}\n`);
    });
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`HAProxy exited with ${child.exitCode}:\n${printed}`);
    if (
      await command('show info').then(
        (answer) => answer.includes('Name: HAProxy'),
        () => false,
      )
    )
      break;
    if (tries > 100) throw new Error(`HAProxy did not start within 10 s:\n${printed}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    command,
    async server(name) {
      // show stat: CSV, one line per proxy and server; the columns are named in its first line.
      const [header = '', ...rows] = (await command('show stat')).split('\n');
      const columns = header.replace(/^# /, '').split(',');
      const row = rows.map((line) => line.split(',')).find((fields) => fields[0] === 'instances' && fields[1] === name);
      if (!row) throw new Error(`no server ${name} in HAProxy's stats`);
      const field = (column: string) => row[columns.indexOf(column)] ?? '';
      return { status: field('status').split(' ')[0]!, sessions: Number(field('scur')) };
    },
    output: () => printed,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGUSR1'); // soft stop
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
