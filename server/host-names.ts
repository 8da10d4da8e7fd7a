// Which names in a request's Host header a server answers, against DNS rebinding: a page on another site points
// a name of its own at 127.0.0.1, and the browser, taking the page's name for the server's, lets the page read
// what the server answers. Its requests name the page's host. The names no page can take over are every IP
// address and localhost with its subdomains (RFC 6761); a server answers those and the names it is told to,
// or any. Shared by the service (ALLOWED_HOSTS) and npx user-records-sandbox (--allowed-hosts): imports nothing.

/** The names a server answers: any, or (besides those no page can take over) these. */
export type AllowedHosts = { readonly any: true } | { readonly any: false; readonly names: ReadonlySet<string> };

const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A comma-separated list of host names (no scheme or port), lower-cased, or `*` for any; throws on anything else. */
export function parseHostNames(raw: string): readonly string[] | '*' {
  if (raw.trim() === '*') return '*';
  const names = raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.length === 0 || names.some((name) => !HOST_NAME.test(name)))
    throw new Error('must be * or a comma-separated list of host names such as api.example.com, without scheme or port');
  return names;
}

/** An address only this machine reaches. */
const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|\[::1\]|localhost)$/i;

/**
 * What a server listening on `listenHost` answers: `listed` (ALLOWED_HOSTS) when given; otherwise, on a
 * loopback address, only the names no page can take over, and elsewhere (behind a proxy, in a container) any.
 */
export function allowedHostsFor(listed: readonly string[] | '*' | undefined, listenHost: string): AllowedHosts {
  if (listed === '*') return { any: true };
  if (listed === undefined) return LOOPBACK.test(listenHost) ? { any: false, names: new Set() } : { any: true };
  return { any: false, names: new Set(listed) };
}

/** The host part of a Host header (`name`, `1.2.3.4` or `[::1]`), without its port, lower-cased. */
export function hostNameOf(host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
  return name.toLowerCase();
}

/** True for a name no page can point here: an IP address, or localhost and its subdomains. */
function cannotBeRebound(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || /^\[[0-9a-f:.]+\]$/.test(name) || name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Whether a server that answers `allowed` answers a request with this Host header. No Host (HTTP/1.0): yes,
 * as no browser sends such a request.
 */
export function answersHost(allowed: AllowedHosts, host: string | undefined): boolean {
  if (allowed.any || host === undefined || host === '') return true;
  const name = hostNameOf(host);
  return cannotBeRebound(name) || allowed.names.has(name);
}
