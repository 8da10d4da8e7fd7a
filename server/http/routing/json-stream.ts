import { Readable } from 'node:stream';

const CHUNK_BYTES = 16 * 1024;

/**
 * A JSON array, written while its items are still being read. Until the first chunk is full nothing is sent:
 * an array that fits in one chunk comes back whole, as a string (with a Content-Length, and without the
 * cost of a stream, most of the time a short list would take), and a store that fails before then still
 * gets a proper error response. Past the first chunk the array streams, and a failure can only abort the
 * response, which the caller does.
 */
export async function jsonArray(items: AsyncIterable<unknown>): Promise<string | Readable> {
  const iterator = items[Symbol.asyncIterator]();
  let current = await iterator.next();
  let buffer = '[';
  let separator = '';
  /** Appends items until the buffer holds a chunk or the items end. */
  async function fill(): Promise<void> {
    while (!current.done && buffer.length < CHUNK_BYTES) {
      buffer += separator + JSON.stringify(current.value);
      separator = ',';
      current = await iterator.next();
    }
  }
  await fill();
  if (current.done) return `${buffer}]`;
  // Chunks keep the number of socket writes low without holding more than one in memory.
  async function* chunks(): AsyncGenerator<string> {
    while (!current.done) {
      yield buffer;
      buffer = '';
      await fill();
    }
    yield `${buffer}]`;
  }
  return Readable.from(chunks(), { objectMode: false });
}
