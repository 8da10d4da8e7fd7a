// Base64 of UTF-8 text, for code that also runs in the MSW handlers of the client package: with Node's Buffer
// where there is one (it encodes a cursor faster), and otherwise with what browsers have (btoa, atob,
// TextEncoder).

type Encoding = 'base64' | 'base64url';
interface NodeBuffer {
  from(text: string, encoding?: Encoding | 'utf8'): Uint8Array & { toString(encoding: Encoding | 'utf8'): string };
  from(bytes: Uint8Array): { toString(encoding: Encoding | 'utf8'): string };
}
const nodeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;

/** Standard base64 (RFC 4648 §4) of bytes. */
function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The bytes of standard base64; atob throws on characters outside its alphabet or a length no encoder makes. */
function base64ToBytes(encoded: string): Uint8Array {
  const binary = atob(encoded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const decodeBase64 = (encoded: string): string => new TextDecoder().decode(base64ToBytes(encoded));

const urlSafe = (base64: string) => base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** Standard base64 (RFC 4648 §4) of the text's UTF-8 bytes, as in a Basic `Authorization` header. */
export const toBase64 = (text: string): string =>
  nodeBuffer ? nodeBuffer.from(text, 'utf8').toString('base64') : bytesToBase64(new TextEncoder().encode(text));

/**
 * The text whose UTF-8 bytes a standard base64 string encodes; invalid UTF-8 becomes U+FFFD. Callers check
 * the alphabet first: Node skips characters outside it, where browsers throw.
 */
export const fromBase64 = (encoded: string): string => (nodeBuffer ? nodeBuffer.from(encoded, 'base64').toString('utf8') : decodeBase64(encoded));

/** base64url without padding (RFC 4648 §5) of bytes, such as a digest or a cursor. */
export const bytesToBase64Url = (bytes: Uint8Array): string => (nodeBuffer ? nodeBuffer.from(bytes).toString('base64url') : urlSafe(bytesToBase64(bytes)));

/**
 * The bytes of a base64url string (padding optional); callers check the alphabet first. Node ignores bits
 * and characters no encoder would have written, so a caller that needs the exact form encodes again and compares.
 */
export const base64UrlToBytes = (encoded: string): Uint8Array =>
  nodeBuffer ? nodeBuffer.from(encoded, 'base64url') : base64ToBytes(encoded.replace(/-/g, '+').replace(/_/g, '/'));
