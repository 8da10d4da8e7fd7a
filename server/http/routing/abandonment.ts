import type { ServerResponse } from 'node:http';

/**
 * A signal that aborts when the response closes before it was finished: the client hung up (or its connection
 * was cut), and nobody will read the answer. A search stops at its next statement rather than examining
 * every user for nobody; a sandbox's held answer stops waiting.
 */
export function abandonment(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.closed) controller.abort();
  else res.once('close', () => res.writableFinished || controller.abort());
  return controller.signal;
}
