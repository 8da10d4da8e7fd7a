import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { parseInteger, parseLatency } from '../../server/config-defaults.js';
import { allowedHostsFor, answersHost, parseHostNames } from '../../server/host-names.js';
import { asUriReference, problemDocument } from '../../server/http/errors/problem.js';
import { misdirected } from '../../server/http/security/misdirected.js';
import { localOriginCors } from '../../server/http/security/cors-policy.js';
import type { BasicCredentials } from '../src/index.js';
import { createInMemoryService } from '../src/service.js';

// `npx user-records-sandbox`: the sandbox without cloning the repository. The same in-memory service the MSW
// handlers run (the service's own handlers, domain, checks and validation; POST /__sandbox/reset, `delay`,
// `Prefer: code=`), served over node:http, with the sandbox's CORS for pages on this machine. No native
// module, no database: only what the client package already holds.

/** Options of startSandbox. */
export interface SandboxOptions {
  readonly port?: number;
  readonly host?: string;
  readonly credentials?: BasicCredentials;
  readonly users?: readonly unknown[];
  readonly latency?: number | readonly [min: number, max: number];
  /**
   * Host names answered besides the IP addresses and localhost (`*`: any). On a loopback address nothing else
   * is answered by default (421), against DNS rebinding, as the service does (ALLOWED_HOSTS).
   */
  readonly allowedHosts?: readonly string[] | '*';
}

/** A running sandbox: where it listens, and how to stop it. */
export interface Sandbox {
  readonly url: string;
  close(): Promise<void>;
}

/** The request as fetch sees it; aborted when the client goes away before its answer. */
function requestOf(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), {
    method: req.method ?? 'GET',
    headers,
    signal: aborted.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) return void res.end();
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), res);
}

/** Starts the sandbox; resolves once it listens (port 0: a free one, named in `url`). */
export async function startSandbox({ port = 4011, host = '127.0.0.1', credentials, users, latency, allowedHosts }: SandboxOptions = {}): Promise<Sandbox> {
  let origin = '';
  let service: ReturnType<typeof createInMemoryService> | undefined;
  const allowed = allowedHostsFor(allowedHosts, host);
  const server: Server = createServer((req, res) => {
    if (!answersHost(allowed, req.headers.host)) {
      const { status, headers, body } = problemDocument(misdirected(req.headers.host!), asUriReference(new URL(req.url ?? '/', 'http://sandbox').pathname));
      res.writeHead(status, { ...headers, 'Content-Type': 'application/problem+json' }).end(body);
      return;
    }
    const request = requestOf(req, res, origin);
    const cors = localOriginCors(request);
    const answered = cors.preflight
      ? Promise.resolve(cors.preflight)
      : service!.dispatch.handles(request)
        ? service!.dispatch.answer(request)
        : Promise.resolve(service!.dispatch.notFound(request, 'https://www.npmjs.com/package/@user-records/client'));
    answered
      .then((response) => {
        for (const [name, value] of Object.entries(cors.headers)) response.headers.set(name, value);
        return send(response, res);
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  service = createInMemoryService(
    { baseUrl: origin, ...(credentials ? { credentials } : {}), ...(users ? { users } : {}), ...(latency !== undefined ? { latency } : {}) },
    'user-records-sandbox',
  );
  return {
    url: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const USAGE = `user-records-sandbox [--port 4011] [--host 127.0.0.1] [--allowed-hosts names] [--users users.json] [--latency 200-800] [--username admin --password dev-password]`;

/** The command: reads the command line, starts the sandbox; exits 1 with one line on anything it cannot use. */
export async function main(): Promise<void> {
  const fail = (line: string): never => {
    console.error(`user-records-sandbox: ${line}\n  ${USAGE}`);
    process.exit(1);
  };
  const options = {
    port: { type: 'string', default: '4011' },
    host: { type: 'string', default: '127.0.0.1' },
    // Read as the service reads ALLOWED_HOSTS, which is its default.
    'allowed-hosts': { type: 'string', ...(process.env.ALLOWED_HOSTS ? { default: process.env.ALLOWED_HOSTS } : {}) },
    users: { type: 'string' },
    latency: { type: 'string' },
    username: { type: 'string', default: 'admin' },
    password: { type: 'string', default: 'dev-password' },
    help: { type: 'boolean', default: false },
  } as const;
  let values: ReturnType<typeof parseArgs<{ options: typeof options }>>['values'];
  try {
    ({ values } = parseArgs({ options }));
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help) {
    console.log(`${USAGE}\n  The User Records Service's sandbox on an in-memory store: POST /__sandbox/reset, ?delay=, Prefer: code=.`);
    return;
  }
  // Read as make sandbox reads PORT and SANDBOX_LATENCY_MS.
  const read = <T>(option: string, raw: string, parse: (raw: string) => T): T => {
    try {
      return parse(raw);
    } catch (error) {
      return fail(`--${option} ${(error as Error).message} (got ${raw})`);
    }
  };
  const port = read('port', values.port, parseInteger(0, 65535));
  const latency = values.latency === undefined ? undefined : read('latency', values.latency, parseLatency);
  const allowedHosts = values['allowed-hosts'] === undefined ? undefined : read('allowed-hosts', values['allowed-hosts'], parseHostNames);
  let users: unknown;
  if (values.users !== undefined) {
    try {
      users = JSON.parse(readFileSync(values.users, 'utf8'));
    } catch (error) {
      fail(`--users ${values.users}: ${(error as Error).message}`);
    }
    if (!Array.isArray(users)) fail(`--users ${values.users} must hold a JSON array of users`);
  }
  try {
    const sandbox = await startSandbox({
      port,
      host: values.host,
      ...(allowedHosts === undefined ? {} : { allowedHosts }),
      credentials: { username: values.username, password: values.password },
      ...(users ? { users: users as unknown[] } : {}),
      ...(latency ? { latency: [latency.min, latency.max] as const } : {}),
    });
    console.log(JSON.stringify({ url: sandbox.url, msg: 'user records sandbox listening' }));
    const stop = () => void sandbox.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (error) {
    fail((error as Error).message);
  }
}
