import { Readable } from 'node:stream';

const CHUNK_BYTES = 16 * 1024;

/** True for values to be streamed as a JSON array rather than serialised at once. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * A JSON array, written while its items are still being read. Until the first chunk is full nothing is sent:
 * an array that fits in one chunk comes back whole, as a string (with a Content-Length, and without the
 * cost of a stream, which was most of the time of a short list), and a store that fails before then still
 * gets a proper error response. Past the first chunk the array streams, and a failure can only abort the
 * response, which the caller does.
 */
export async function jsonArray(items: AsyncIterable<unknown>): Promise<string | Readable> {
  const iterator = items[Symbol.asyncIterator]();
  let head = '[';
  let separator = '';
  let current = await iterator.next();
  while (!current.done && head.length < CHUNK_BYTES) {
    head += separator + JSON.stringify(current.value);
    separator = ',';
    current = await iterator.next();
  }
  if (current.done) return `${head}]`;
  async function* chunks(): AsyncGenerator<string> {
    yield head;
    let buffer = '';
    while (!current.done) {
      buffer += `,${JSON.stringify(current.value)}`;
      // Batching keeps the number of socket writes low without holding more than a chunk in memory.
      if (buffer.length >= CHUNK_BYTES) {
        yield buffer;
        buffer = '';
      }
      current = await iterator.next();
    }
    yield `${buffer}]`;
  }
  return Readable.from(chunks(), { objectMode: false });
}
