// Answers repeat parts of the request (a path, a media type, a member name) so that a client can tell what
// was refused. A request may make those parts as long as its head or body: repeated whole, a 16 KiB path
// would make a 32 KiB answer, and a 60 KB member name a 60 KB one. Browser-safe.

/** Most characters of one part of a request that an answer repeats: enough to recognise it. */
export const EXCERPT_CHARACTERS = 64;

/** `text`, or its first `max` characters (code points, never half of one) and an ellipsis. */
export function excerpt(text: string, max = EXCERPT_CHARACTERS): string {
  if (text.length <= max) return text;
  // 2 × max UTF-16 units hold at least max code points; a pair cut at the end is never among the first max.
  const points = Array.from(text.slice(0, 2 * max));
  return points.length <= max && text.length <= 2 * max ? text : `${points.slice(0, max).join('')}…`;
}

/** Most characters of a problem's `instance` (the request path, as a URI reference). */
export const INSTANCE_CHARACTERS = 1024;
