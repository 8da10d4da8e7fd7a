// Base64 of UTF-8 text with what both Node 20 and browsers have (btoa, atob, TextEncoder), so that the code
// that uses it can run in the MSW handlers of the client package too.

/** Standard base64 (RFC 4648 §4) of bytes. */
function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Standard base64 (RFC 4648 §4) of the text's UTF-8 bytes, as in a Basic `Authorization` header. */
export const toBase64 = (text: string): string => bytesToBase64(new TextEncoder().encode(text));

/** The text whose UTF-8 bytes a standard base64 string encodes; invalid UTF-8 becomes U+FFFD. Throws on what is not base64. */
export function fromBase64(encoded: string): string {
  const binary = atob(encoded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

const urlSafe = (base64: string) => base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** base64url without padding (RFC 4648 §5) of the text's UTF-8 bytes, as cursors carry it. */
export const toBase64Url = (text: string): string => urlSafe(toBase64(text));

/** base64url without padding (RFC 4648 §5) of bytes, such as a digest. */
export const bytesToBase64Url = (bytes: Uint8Array): string => urlSafe(bytesToBase64(bytes));

/** The text of a base64url string (padding optional); throws on what is not base64url. */
export const fromBase64Url = (encoded: string): string => fromBase64(encoded.replace(/-/g, '+').replace(/_/g, '/'));
