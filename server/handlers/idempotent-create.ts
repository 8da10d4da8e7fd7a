import { bytesToBase64Url } from '../domain/base64.js';
import type { UserService } from '../domain/user.service.js';
import type { User, UserFields } from '../domain/user.js';

/** JSON with object members in a fixed order, so that equal bodies give equal fingerprints. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const members = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
}

/** A digest of what a request asks for: the operation and its body (SHA-256, base64url; Web Crypto, so that browsers have it too). */
export async function fingerprintOf(operationId: string, body: unknown): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${operationId}\n${canonicalJson(body)}`));
  return bytesToBase64Url(new Uint8Array(digest));
}

/**
 * Creates a user and renders the reply; with an Idempotency-Key, at most once per key, and a retry gets
 * the first reply again, marked `Idempotent-Replayed: true`.
 */
export async function createUserOnce<R extends { readonly headers?: Readonly<Record<string, string>> }>(
  users: UserService,
  request: { operationId: string; body: unknown; fields: UserFields; idempotencyKey: string | undefined; client: string },
  render: (user: User) => R,
): Promise<R> {
  if (request.idempotencyKey === undefined) return render(await users.create(request.fields));
  const key = { key: request.idempotencyKey, fingerprint: await fingerprintOf(request.operationId, request.body), client: request.client };
  const { outcome, replayed } = await users.createOnce(request.fields, key, render);
  return replayed ? { ...outcome, headers: { ...outcome.headers, 'Idempotent-Replayed': 'true' } } : outcome;
}
