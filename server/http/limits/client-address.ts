import { isIPv4, isIPv6 } from 'node:net';
import type { Middleware } from 'koa';

// Every per-client limit (failed credentials, writes) and every Idempotency-Key's scope go by the key this
// module gives. One client must not get a fresh budget by spelling its address differently, and must not
// be able to name another client's address: the key is normalised and never taken from what it wrote.

/** Longest textual address worth parsing (an IPv6 address with an embedded IPv4 and a zone fits easily). */
const MAX_ADDRESS_LENGTH = 64;

/** The eight 16-bit groups of a valid IPv6 address written without brackets, zone or port. */
function ipv6Groups(text: string): number[] {
  // A trailing dotted quad (`::ffff:192.0.2.1`) is two groups written another way.
  const hexOnly = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`);
  const [head = '', tail] = hexOnly.split('::');
  const hex = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = hex(head);
  const right = hex(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The client key of one textual address: IPv4 as dotted quad (IPv4-mapped IPv6 included); IPv6 as its /64
 * prefix in canonical lower case, because one subscriber usually holds a whole /64. Undefined when the text
 * is not an address.
 */
export function normaliseAddress(raw: string): string | undefined {
  if (raw.length > MAX_ADDRESS_LENGTH) return undefined;
  let text = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text)?.[1];
  if (bracketed !== undefined) text = bracketed;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.replace(/%.*$/, '');
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return undefined;
  const groups = ipv6Groups(text.toLowerCase());
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.');
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/**
 * The address of the client: with `hops` trusted proxies, the X-Forwarded-For entry the farthest of them
 * appended (counted from the right, the socket's peer being the nearest); entries further left were written
 * by the client and are never used. With fewer entries than hops, the leftmost one the proxies vouch for.
 */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | undefined, hops: number): string {
  const socket = normaliseAddress(socketAddress ?? '') ?? 'unknown';
  if (hops === 0 || forwardedFor === undefined) return socket;
  const entries = forwardedFor.split(',').slice(-hops);
  const chosen = entries[0];
  // A trusted proxy appends real addresses; anything else means a misconfigured hop count. Counting such
  // requests as the proxy's own keeps the client from choosing its key.
  return (chosen === undefined ? undefined : normaliseAddress(chosen)) ?? socket;
}

/** Puts the client key on `ctx.state.client` for the limits (and anything else counting per client). */
export function clientKey(hops: number): Middleware {
  if (hops === 0) {
    // Without proxies the key is the socket's: worked out once per connection, not once per request.
    const bySocket = new WeakMap<object, string>();
    return (ctx, next) => {
      const { socket } = ctx.req;
      let key = bySocket.get(socket);
      if (key === undefined) bySocket.set(socket, (key = clientAddress(socket.remoteAddress, undefined, 0)));
      ctx.state.client = key;
      return next();
    };
  }
  return (ctx, next) => {
    const forwarded = ctx.req.headers['x-forwarded-for'];
    ctx.state.client = clientAddress(ctx.req.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(',') : forwarded, hops);
    return next();
  };
}

/**
 * The block a client key belongs to: an IPv4 address's /24, an IPv6 key as it is (already its /64). Fairness
 * between clients counts by block, so that an attacker holding many addresses of one block weighs as one
 * client; the price is that a user who shares a /24 with an attacker shares its turn.
 */
export function addressBlock(client: string): string {
  return isIPv4(client) ? `${client.slice(0, client.lastIndexOf('.'))}.0/24` : client;
}
