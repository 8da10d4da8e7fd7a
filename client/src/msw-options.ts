// What MSW does with a request no handler takes, under the name each msw major reads: msw 2 reads
// `onUnhandledRequest`, msw 3 reads `onUnhandledFrame` (its strategy covers WebSocket connections too), and each
// ignores the other's name without a word, so a setup written for one major lets every request through on the
// other. Both names carry the same strategy, so nothing here guesses which major is installed.

/** Pass a request no handler takes on to the network (`bypass`), pass it on and warn (`warn`), or fail it (`error`). */
export type UnhandledRequestStrategy = 'bypass' | 'warn' | 'error';

/** The options of `server.listen(...)` and `worker.start(...)` that set the strategy, on msw 2 and msw 3 alike. */
export interface UnhandledRequestOptions {
  /** The name msw 2 reads. */
  readonly onUnhandledRequest: UnhandledRequestStrategy;
  /** The name msw 3 reads. */
  readonly onUnhandledFrame: UnhandledRequestStrategy;
}

/** `server.listen(unhandledRequests('error'))`, `worker.start({ ...unhandledRequests('bypass'), quiet: true })`: one spelling for msw 2 and 3. */
export function unhandledRequests(strategy: UnhandledRequestStrategy): UnhandledRequestOptions {
  return { onUnhandledRequest: strategy, onUnhandledFrame: strategy };
}
