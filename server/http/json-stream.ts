import { Readable } from 'node:stream';

const CHUNK_BYTES = 16 * 1024;

/** True for values to be streamed as a JSON array rather than serialised at once. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * A JSON array, written while its items are still being read. The first item is awaited before the stream
 * is handed over, so a store that fails at once still gets a proper error response; a failure after the
 * first bytes can only abort the response, which the caller does.
 */
export async function jsonArrayStream(items: AsyncIterable<unknown>): Promise<Readable> {
  const iterator = items[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* chunks(): AsyncGenerator<string> {
    let buffer = '[';
    let current = first;
    let separator = '';
    while (!current.done) {
      buffer += separator + JSON.stringify(current.value);
      separator = ',';
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
