import { hostNameOf } from '../../host-names.js';
import { excerpt } from '../errors/excerpt.js';
import { HttpProblem } from '../errors/problem.js';

// The 421 of a request whose Host this server does not answer for: the server's (allowed-hosts.ts) and the npx
// sandbox's (client/node/sandbox.ts) alike. Free of Koa, so that the client package compiles it on its own.

/** The problem a request naming `host` gets. */
export const misdirected = (host: string): HttpProblem =>
  new HttpProblem(
    'misdirected-request',
    `This server does not answer for the host ${excerpt(hostNameOf(host))}: it answers its IP addresses, localhost, and the names ALLOWED_HOSTS lists.`,
  );
